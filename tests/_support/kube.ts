/**
 * What e2e and integration tests need around the client: an admin client for
 * the test cluster, throwaway namespaces, and bounded waits that say what
 * they were waiting for.
 *
 * @module
 */
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { ApiError, isNotFound } from "../../lib/kube/errors.ts";
import { EVENTS, NAMESPACES } from "../../lib/kube/resources.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { testKubeconfig } from "./cluster.ts";

/** A client with the test cluster's admin credentials; close it when done. */
export async function adminClient(): Promise<KubeClient> {
  return new KubeClient(await loadConfig({ kubeconfig: testKubeconfig() }));
}

/** Creates a namespace with a unique name starting with `prefix`. */
export async function createNamespace(client: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${crypto.randomUUID().slice(0, 6)}`;
  await client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  return name;
}

/**
 * Deletes a namespace and waits (up to a minute) until it is gone, so the
 * objects it held do not keep the next test's operator busy.
 */
export async function deleteNamespace(client: KubeClient, name: string): Promise<void> {
  await client.delete(NAMESPACES, name).catch((e) => {
    if (!isNotFound(e)) throw e;
  });
  await waitFor(
    `namespace ${name} to be gone`,
    async () => (await getOrUndefined(client, NAMESPACES, name)) === undefined,
  );
}

/**
 * Polls `probe` until it returns a value other than `undefined`/`false`.
 *
 * @throws {Error} naming `what` and the last value seen after `timeoutMs`.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as T;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${String(last)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The object, or undefined when it does not exist. */
export async function getOrUndefined<T extends KubeObject>(
  client: KubeClient,
  resource: Resource,
  name: string,
  namespace?: string,
): Promise<T | undefined> {
  try {
    return await client.get<T>(resource, name, namespace ? { namespace } : {});
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** `status.conditions[type]` of an object. */
export function condition(
  object: KubeObject | undefined,
  type: string,
): { status: string; reason?: string; message?: string } | undefined {
  const conditions = (object?.status as { conditions?: { type: string; status: string }[] })
    ?.conditions;
  return conditions?.find((c) => c.type === type);
}

/** events.k8s.io Events about `name` in `namespace` with `reason`. */
export async function eventsFor(
  client: KubeClient,
  namespace: string,
  name: string,
  reason?: string,
): Promise<KubeObject[]> {
  const list = await client.list(EVENTS, { namespace });
  return list.items.filter((e) => {
    const regarding = e.regarding as { name?: string } | undefined;
    return regarding?.name === name && (reason === undefined || e.reason === reason);
  });
}

/**
 * Whether the test cluster's API server streams lists (`sendInitialEvents`,
 * the WatchList feature: off by default in Kubernetes 1.30, 1.31 and 1.33),
 * asked with a streaming watch of namespaces, left at its first event (there
 * are always namespaces). Its deadline only bounds a server that never
 * answers: one of a second could run out while a busy server waits for its
 * watch cache to catch up, and fail the probe.
 */
export async function serverStreamsLists(client: KubeClient): Promise<boolean> {
  try {
    const watch = client.watch(NAMESPACES, {
      sendInitialEvents: true,
      resourceVersionMatch: "NotOlderThan",
      allowWatchBookmarks: true,
      timeoutSeconds: 60,
    });
    for await (const _ of watch) break;
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 422) return false;
    throw error;
  }
}
