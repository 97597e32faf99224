/**
 * Compaction of the local control plane's datastore, through `etcdctl`
 * (which kine answers too).
 *
 * @module
 */
import { join } from "node:path";

/**
 * Compacts the datastore at `endpoint` (etcd or kine, e.g.
 * `http://127.0.0.1:2379`) to its current revision, physically, with the
 * `etcdctl` in `binDir`, and returns that revision. Watches and lists from
 * any older resourceVersion then fail with 410 Gone wherever the API server
 * reads them from the datastore rather than from its watch cache.
 *
 * @throws {Error} when the datastore cannot be reached or refuses the compaction.
 */
export async function compactEtcd(
  endpoint: string,
  binDir: string,
  signal?: AbortSignal,
): Promise<number> {
  const etcdctl = (...args: string[]) =>
    new Deno.Command(join(binDir, "etcdctl"), {
      args: [`--endpoints=${endpoint}`, ...args],
      stdin: "null",
      signal,
    }).output();
  const range = await etcdctl("get", "/", "--prefix", "--keys-only", "--limit=1", "-w", "json");
  const header = text(range.stdout) && JSON.parse(text(range.stdout)).header;
  const revision = Number(header?.revision);
  if (!range.success || !Number.isSafeInteger(revision) || revision <= 0) {
    throw new Error(
      `The datastore at ${endpoint} reported no usable revision: ${
        text(range.stderr) || text(range.stdout)
      }`,
    );
  }
  const compacted = await etcdctl("compaction", "--physical", String(revision));
  // Nothing was written since the last compaction to this revision.
  if (!compacted.success && !text(compacted.stderr).includes("has been compacted")) {
    throw new Error(`Compacting ${endpoint} to ${revision} failed: ${text(compacted.stderr)}`);
  }
  return revision;
}

function text(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes).trim();
}
