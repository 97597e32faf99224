/**
 * Finds the control-plane binaries through `build.sh` beside this file
 * (`deno task control-plane`), which builds them once into a cache (minutes)
 * and afterwards only prints where they are (milliseconds), or uses
 * `KUBEBUILDER_ASSETS` when set.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import type { Datastore } from "./_datastore.ts";

/** Where the binaries are and how long it took to get them. */
export interface Binaries {
  binDir: string;
  /** True when this call compiled them rather than finding them cached. */
  built: boolean;
  ms: number;
}

/** Resolved on use: from a published copy of this module the script is no local file. */
const SCRIPT = new URL("./build.sh", import.meta.url);
const DONE_MARKER = "[build-control-plane] done";

/**
 * Runs the build script, forwarding its progress lines to `log`; the
 * binaries include kine when `datastore` is kine.
 *
 * @throws {Error} when the script fails, with the last lines it printed.
 */
export async function controlPlaneBinaries(
  log: (message: string) => void,
  signal?: AbortSignal,
  datastore: Datastore = "etcd",
): Promise<Binaries> {
  const started = performance.now();
  const script = fileURLToPath(SCRIPT);
  const child = new Deno.Command("bash", {
    args: [script],
    env: { KINGLET_DATASTORE: datastore },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal,
  }).spawn();
  const recent: string[] = [];
  let built = false;
  const progress = forEachLine(child.stderr, (line) => {
    log(line);
    built ||= line.startsWith(DONE_MARKER);
    recent.push(line);
    if (recent.length > 30) recent.shift();
  });
  const [stdout, status] = await Promise.all([
    new Response(child.stdout).text(),
    child.status,
    progress,
  ]);
  signal?.throwIfAborted();
  const binDir = stdout.trimEnd().split("\n").at(-1)?.trim() ?? "";
  if (!status.success || binDir === "") {
    throw new Error(
      `Cannot get the control-plane binaries: ${script} exited with code ${status.code}:\n` +
        recent.join("\n"),
    );
  }
  return { binDir, built, ms: performance.now() - started };
}

async function forEachLine(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
): Promise<void> {
  let pending = "";
  for await (const text of stream.pipeThrough(new TextDecoderStream())) {
    const lines = (pending + text).split("\n");
    pending = lines.pop() ?? "";
    lines.forEach(onLine);
  }
  if (pending !== "") onLine(pending);
}
