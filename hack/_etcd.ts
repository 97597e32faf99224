/**
 * The few etcd calls the local control plane needs, through etcd's gRPC-JSON
 * gateway (plain HTTP on loopback): health and compaction.
 *
 * @module
 */

/**
 * Compacts etcd at `endpoint` (e.g. `http://127.0.0.1:2379`) to its current
 * revision, physically, and returns that revision. Watches and lists from any
 * older resourceVersion then fail with 410 Gone wherever the API server reads
 * them from etcd rather than from its watch cache.
 *
 * @throws {Error} when etcd cannot be reached or refuses the compaction.
 */
export async function compactEtcd(endpoint: string, signal?: AbortSignal): Promise<number> {
  const range = await gateway(endpoint, "/v3/kv/range", { key: btoa("/"), limit: 1 }, signal);
  const revision = Number((range.header as { revision?: string } | undefined)?.revision);
  if (!Number.isSafeInteger(revision) || revision <= 0) {
    throw new Error(`etcd at ${endpoint} reported no usable revision: ${JSON.stringify(range)}`);
  }
  try {
    await gateway(
      endpoint,
      "/v3/kv/compaction",
      { revision: String(revision), physical: true },
      signal,
    );
  } catch (error) {
    // Nothing was written since the last compaction to this revision.
    if (!(error instanceof Error && error.message.includes("has been compacted"))) throw error;
  }
  return revision;
}

/** Whether etcd at `endpoint` answers its health check with a healthy status. */
export async function etcdHealthy(endpoint: string, signal?: AbortSignal): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/health`, { signal });
    const body = await response.json() as { health?: string };
    return response.ok && body.health === "true";
  } catch (error) {
    if (signal?.aborted) throw error;
    return false;
  }
}

async function gateway(
  endpoint: string,
  path: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${endpoint}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`etcd ${path} failed with HTTP ${response.status}: ${text}`);
  }
  return JSON.parse(text) as Record<string, unknown>;
}
