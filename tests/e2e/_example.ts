/**
 * Runs an example operator as its readers run it (`deno run
 * examples/<name>/main.ts` with the permissions docs/writing-operators.md gives), against
 * the test cluster, on ports of its own, as the ServiceAccount of a
 * kubeconfig given (so only the RBAC derived from its specs applies), after
 * its committed CRD is applied, as its readers apply it.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { KubeClient, KubeObject, Resource } from "../../lib/kube/mod.ts";
import { installCrds } from "../../lib/runtime/mod.ts";
import { assertNoDenials, denialsInLog, waitFor } from "../../lib/testing/mod.ts";
import { testKubeconfig } from "../_support/cluster.ts";

/** How the example's waits poll: 60 s at most, every 250 ms. */
const POLL = { timeoutMs: 60_000, intervalMs: 250 };

/** A port no one listens on now, on loopback. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/**
 * Applies the CRDs committed in `examples/<name>/crds/` with `client`, an
 * admin's, as a reader does (`kubectl apply -f examples/<name>/crds/`)
 * before starting the example, which does not install them; resolves once
 * the API server serves each.
 *
 * @throws {Error} when the folder holds no CRD file (`deno task crds` writes them).
 */
export async function applyExampleCrds(client: KubeClient, name: string): Promise<void> {
  const dir = new URL(`../../examples/${name}/crds/`, import.meta.url);
  const crds: KubeObject[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".yaml")) continue;
    crds.push(parse(await Deno.readTextFile(new URL(entry.name, dir))) as KubeObject);
  }
  if (crds.length === 0) throw new Error(`${fileURLToPath(dir)} holds no CRD: run deno task crds`);
  await installCrds(client, crds, { fieldManager: "kubectl" });
}

/**
 * Removes the finalizers of the objects of `resource` left in `namespace`,
 * which a stopped example can no longer remove, so that the namespace can
 * go after a test that failed half-way.
 */
export async function dropFinalizers(
  client: KubeClient,
  resource: Resource,
  namespace: string,
): Promise<void> {
  for (const object of (await client.list(resource, { namespace })).items) {
    if (!object.metadata?.finalizers?.length) continue;
    await client.patch(resource, object.metadata.name!, { metadata: { finalizers: null } }, {
      type: "merge",
      namespace,
    });
  }
}

/** A running example. */
export interface Example {
  /** Resolves once `/readyz` answers 200; throws with the output when the example exited. */
  ready(): Promise<void>;
  /**
   * Polls `check` every 250 ms until it holds, for 60 s at most, and fails
   * at once, naming the verb and resource, when the example's log reports a
   * denied request: a denial says why better than the timeout it causes.
   */
  waitFor<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T>;
  /** Stops it with SIGTERM and resolves to its exit code. Idempotent. */
  stop(): Promise<number>;
  /** What it printed so far, standard output and error interleaved. */
  output(): string;
  /**
   * Throws when the example's log reports a denied request, naming each
   * verb and resource (the API server's message, which the runtime quotes
   * when it logs a failed watch, reconcile or Event). Call after
   * {@link stop}, so the whole log is read.
   */
  assertNoDenials(): void;
}

/**
 * Starts `examples/<name>/main.ts` with the guide's command line against the
 * test cluster, authenticated by `kubeconfig` (the admin's by default), with
 * `env` added to its environment (e.g. `WEBHOOK_ADDRESS`); its output is
 * kept for failures.
 */
export function startExample(
  name: string,
  kubeconfig = testKubeconfig(),
  env: Readonly<Record<string, string>> = {},
): Example {
  const main = fileURLToPath(new URL(`../../examples/${name}/main.ts`, import.meta.url));
  const health = `127.0.0.1:${freePort()}`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-read", "--allow-env", "--allow-sys=hostname", main],
    env: { ...env, KUBECONFIG: kubeconfig, HEALTH_ADDRESS: health, METRICS_ADDRESS: "0" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const who = `the ${name} example`;
  const denied = new AbortController();
  let output = "";
  const decoder = new TextDecoder();
  const append = (text: string) => {
    output += text;
    // The API server's message of a denial reads "... is forbidden: User ... cannot ...".
    if (denied.signal.aborted || !text.includes("forbidden")) return;
    try {
      assertNoDenials(denialsInLog(output), who);
    } catch (error) {
      denied.abort(error);
    }
  };
  const drain = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeTo(new WritableStream({ write: (chunk) => append(decoder.decode(chunk)) }));
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  let exited = false;
  const status = child.status.then(async (s) => {
    exited = true;
    await drained;
    return s.code;
  });
  let signalled = false;
  return {
    async ready() {
      const exit = new AbortController();
      void status.then((code) =>
        exit.abort(new Error(`the example exited with ${code}:\n${output}`))
      );
      await waitFor("the example's /readyz to answer 200", async () => {
        const response = await fetch(`http://${health}/readyz`).catch(() => undefined);
        await response?.body?.cancel();
        return response?.ok;
      }, { ...POLL, signal: AbortSignal.any([exit.signal, denied.signal]) });
    },
    waitFor: (what, check) => waitFor(what, check, { ...POLL, signal: denied.signal }),
    stop() {
      // Called at the end of a test and again in its finally: one signal is enough.
      if (!exited && !signalled) child.kill("SIGTERM");
      signalled = true;
      return status;
    },
    output: () => output,
    assertNoDenials: () => assertNoDenials(denialsInLog(output), who),
  };
}
