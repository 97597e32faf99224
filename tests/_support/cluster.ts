/**
 * Access to the local control plane that `hack/with_cluster.ts` starts for
 * integration and e2e tests. Nothing here skips: without a cluster, every
 * helper throws and the test fails, saying how to run it.
 *
 * @example
 * ```ts ignore
 * import { kubectl, testKubeconfig } from "../_support/cluster.ts";
 * const { stdout } = await kubectl(["get", "nodes", "-o", "name"]);
 * ```
 *
 * @module
 */
import { join } from "node:path";
import { compactEtcd as compactEtcdAt } from "../../lib/testing/control_plane/mod.ts";

/** What {@link kubectl} printed and how it exited. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link kubectl}. */
export interface KubectlOptions {
  /** Written to kubectl's standard input, e.g. a manifest for `apply -f -`. */
  stdin?: string;
  /** Kills kubectl when aborted (the result then has a non-zero code). */
  signal?: AbortSignal;
}

/**
 * Path of the admin kubeconfig of the test cluster.
 *
 * @throws {Error} when not run through `deno task test` or `hack/with_cluster.ts`.
 */
export function testKubeconfig(): string {
  return required("KINGLET_TEST_KUBECONFIG");
}

/** Folder of the control-plane binaries (kubectl, kube-apiserver, …). */
export function binDir(): string {
  return required("KINGLET_TEST_BIN_DIR");
}

/** What the test cluster's API server stores in: `etcd`, or `kine` under `KINGLET_DATASTORE=kine`. */
export function testDatastore(): "etcd" | "kine" {
  return Deno.env.get("KINGLET_TEST_DATASTORE") === "kine" ? "kine" : "etcd";
}

/** `http://127.0.0.1:<port>` of the test cluster's etcd. */
export function etcdEndpoint(): string {
  return required("KINGLET_TEST_ETCD");
}

/**
 * Compacts the test cluster's etcd to its current revision and returns it;
 * older resourceVersions then answer 410 Gone where read from etcd.
 */
export function compactEtcd(signal?: AbortSignal): Promise<number> {
  return compactEtcdAt(etcdEndpoint(), binDir(), signal);
}

/**
 * Runs kubectl against the test cluster: the pinned one from {@link binDir},
 * or the one on `PATH` when `KUBEBUILDER_ASSETS` brought no kubectl. Does not throw on a
 * non-zero exit: the caller asserts on `code`.
 */
export async function kubectl(
  args: string[],
  options: KubectlOptions = {},
): Promise<KubectlResult> {
  const child = new Deno.Command(kubectlPath(), {
    args: ["--kubeconfig", testKubeconfig(), ...args],
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal: options.signal,
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

function kubectlPath(): string {
  const pinned = join(binDir(), "kubectl");
  try {
    Deno.statSync(pinned);
    return pinned;
  } catch {
    return "kubectl";
  }
}

function required(name: string): string {
  const value = Deno.env.get(name);
  if (!value) {
    throw new Error(
      `${name} is not set: this test needs the local control plane. Run it through ` +
        "`deno task test` (or `deno task test:cluster`), or wrap it yourself: " +
        "`deno run -A hack/with_cluster.ts -- deno test -A <files>`",
    );
  }
  return value;
}
