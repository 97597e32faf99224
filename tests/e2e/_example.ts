/**
 * Runs an example operator as its readers run it (`deno run
 * examples/<name>/main.ts` with the permissions the README gives), against
 * the test cluster, on ports of its own.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { testKubeconfig } from "../_support/cluster.ts";
import { waitFor } from "../_support/kube.ts";

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/**
 * Starts `examples/<name>/main.ts` with the README's command line against the
 * test cluster; its output is kept for failures.
 */
export function startExample(
  name: string,
): { ready(): Promise<void>; stop(): Promise<number>; output(): string } {
  const main = fileURLToPath(new URL(`../../examples/${name}/main.ts`, import.meta.url));
  const health = `127.0.0.1:${freePort()}`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-read", "--allow-env", "--allow-sys=hostname", main],
    env: { KUBECONFIG: testKubeconfig(), HEALTH_ADDRESS: health, METRICS_ADDRESS: "0" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const decoder = new TextDecoder();
  const drain = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeTo(new WritableStream({ write: (chunk) => void (output += decoder.decode(chunk)) }));
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  let exited = false;
  const status = child.status.then(async (s) => {
    exited = true;
    await drained;
    return s.code;
  });
  return {
    async ready() {
      await waitFor("the example's /readyz to answer 200", async () => {
        if (exited) throw new Error(`the example exited with ${await status}:\n${output}`);
        const response = await fetch(`http://${health}/readyz`).catch(() => undefined);
        await response?.body?.cancel();
        return response?.ok;
      });
    },
    async stop() {
      if (!exited) child.kill("SIGTERM");
      return await status;
    },
    output: () => output,
  };
}
