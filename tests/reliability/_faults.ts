/**
 * What the fault tests share: WebApps in bulk, the convergence check (every
 * WebApp Ready at its generation with exactly one Deployment of its own),
 * kubeconfigs pointed at a proxy, the Lease as the tests read it, and the
 * `figure:` lines each test prints.
 *
 * @module
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { parse } from "yaml";
import type { KubeClient } from "../../lib/kube/client.ts";
import { DEPLOYMENTS, LEASES } from "../../lib/kube/resources.ts";
import { isNotFound } from "../../lib/kube/errors.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import type { Lease } from "../../lib/runtime/leader/leader.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { condition, getOrUndefined, waitFor } from "../_support/kube.ts";
import { type OperatorProcess, startOperator } from "../_support/operator.ts";

/** A WebApp as the tests read it. */
export interface WebApp extends KubeObject {
  spec: { image: string; replicas: number };
  status?: { observedGeneration?: number; readyReplicas?: number };
}

export { figure } from "./_measure.ts";

/** Milliseconds as seconds with one decimal, e.g. `3.2 s`. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** `count` names `prefix-0`, `prefix-1`, … */
export function names(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
}

/** Creates a WebApp of `replicas` replicas for each name, all at once. */
export async function createWebApps(
  client: KubeClient,
  namespace: string,
  appNames: readonly string[],
  replicas = 1,
): Promise<void> {
  await Promise.all(appNames.map((name) =>
    client.create(WEB_APPS, {
      apiVersion: "kinglet.dev/v1alpha1",
      kind: "WebApp",
      metadata: { name, namespace },
      spec: { image: "nginx:1.27", replicas },
    })
  ));
}

/** Sets `spec.replicas` of each named WebApp, all at once. */
export async function scaleWebApps(
  client: KubeClient,
  namespace: string,
  appNames: readonly string[],
  replicas: number,
): Promise<void> {
  await Promise.all(
    appNames.map((name) =>
      client.patch(WEB_APPS, name, { spec: { replicas } }, { type: "merge", namespace })
    ),
  );
}

/** Whether the operator has caught up with `app`: Ready, at its generation and replica count. */
export function converged(app: WebApp): boolean {
  return condition(app, "Ready")?.status === "True" &&
    app.status?.observedGeneration === app.metadata?.generation &&
    app.status?.readyReplicas === app.spec.replicas;
}

/**
 * Waits until the namespace holds exactly `count` WebApps, each converged
 * (see {@link converged}) and owning exactly one Deployment at its replica
 * count, with no Deployment left of a deleted WebApp. Resolves to the
 * WebApps.
 */
export async function allConverged(
  client: KubeClient,
  namespace: string,
  count: number,
  timeoutMs = 120_000,
): Promise<WebApp[]> {
  let pending = "";
  try {
    return await waitFor(`${count} WebApps converged`, async () => {
      const apps = (await client.list<WebApp>(WEB_APPS, { namespace })).items;
      const lagging = apps.filter((a) => !converged(a)).map((a) => a.metadata?.name);
      pending = `${apps.length} WebApps, not converged: ${lagging.join(", ") || "none"}`;
      if (apps.length !== count || lagging.length) return false;
      const problems = await deploymentProblems(client, namespace, apps);
      pending += `; ${problems.join("; ") || "Deployments right"}`;
      return problems.length === 0 && apps;
    }, timeoutMs);
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : error} (${pending})`);
  }
}

/**
 * Asserts that every WebApp has exactly one Deployment whose controller
 * owner is that WebApp (matched by uid), and that no Deployment belongs to
 * anything else.
 */
export async function assertOneDeploymentEach(
  client: KubeClient,
  namespace: string,
): Promise<void> {
  const apps = (await client.list<WebApp>(WEB_APPS, { namespace })).items;
  assert.deepEqual(await deploymentProblems(client, namespace, apps), []);
}

async function deploymentProblems(
  client: KubeClient,
  namespace: string,
  apps: readonly WebApp[],
): Promise<string[]> {
  const deployments = (await client.list<KubeObject & { spec: { replicas: number } }>(
    DEPLOYMENTS,
    { namespace },
  )).items;
  const byOwner = new Map<string, typeof deployments>();
  for (const d of deployments) {
    const owner = d.metadata?.ownerReferences?.find((o) => o.controller)?.uid ?? "none";
    byOwner.set(owner, [...(byOwner.get(owner) ?? []), d]);
  }
  const problems: string[] = [];
  for (const app of apps) {
    const owned = byOwner.get(app.metadata?.uid ?? "") ?? [];
    byOwner.delete(app.metadata?.uid ?? "");
    if (owned.length !== 1) {
      problems.push(`${app.metadata?.name} owns ${owned.length} Deployments`);
    } else if (owned[0]!.spec.replicas !== app.spec.replicas) {
      problems.push(`${app.metadata?.name}'s Deployment has ${owned[0]!.spec.replicas} replicas`);
    }
  }
  for (const [owner, owned] of byOwner) {
    problems.push(`${owned.map((d) => d.metadata?.name).join(", ")} owned by ${owner}, no WebApp`);
  }
  return problems;
}

/**
 * Starts kinglet as a separate process running only the WebApp controller,
 * watching only `namespace`, with `args` added.
 */
export function startWebAppOperator(
  kubeconfig: string,
  namespace: string,
  args: string[] = [],
): Promise<OperatorProcess> {
  return startOperator({
    kubeconfig,
    args: [`--namespace=${namespace}`, "--controllers=webapp", ...args],
  });
}

/** The WebApp controller's reconciles so far, of any result. */
export function reconciles(operator: OperatorProcess): Promise<number> {
  return operator.metric("controller_runtime_reconcile_total", { controller: "webapp" });
}

/**
 * Waits until the operator's reconcile count stops moving for `quietMs`,
 * and resolves to it: a baseline to count later reconciles from.
 */
export async function settledReconciles(
  operator: OperatorProcess,
  quietMs = 3_000,
): Promise<number> {
  let last = await reconciles(operator);
  let since = Date.now();
  return await waitFor(`no reconciles for ${quietMs} ms`, async () => {
    const now = await reconciles(operator);
    if (now !== last) [last, since] = [now, Date.now()];
    return Date.now() - since >= quietMs && now;
  }, 120_000);
}

/**
 * Writes a copy of `kubeconfig` whose clusters point at `server` (a proxy
 * in front of the API server) and returns its path.
 */
export async function kubeconfigVia(kubeconfig: string, server: string): Promise<string> {
  const config = parse(await Deno.readTextFile(kubeconfig)) as {
    clusters?: { cluster: { server: string } }[];
  };
  for (const c of config.clusters ?? []) c.cluster.server = server;
  const path = join(dirname(kubeconfig), `via-${new URL(server).port}.kubeconfig`);
  await Deno.writeTextFile(path, JSON.stringify(config), { mode: 0o600 });
  return path;
}

/** The one Lease the deploy/ RBAC lets kinglet take (deploy/role.yaml names it). */
export const LEASE = { namespace: "kinglet-system", name: "kinglet-leader" } as const;

/** The leader Lease, or undefined before the first candidate created it. */
export function readLease(client: KubeClient): Promise<Lease | undefined> {
  return getOrUndefined<Lease>(client, LEASES, LEASE.name, LEASE.namespace);
}

/** Deletes the leader Lease, so that no test waits out one that an earlier test left held. */
export async function deleteLease(client: KubeClient): Promise<void> {
  await client.delete(LEASES, LEASE.name, { namespace: LEASE.namespace }).catch((error) => {
    if (!isNotFound(error)) throw error;
  });
}

/** Waits until the Lease has a holder other than `not` (empty means no holder), and returns it. */
export function leaseHeld(client: KubeClient, not = ""): Promise<Lease> {
  return waitFor(`a holder of the Lease other than "${not}"`, async () => {
    const lease = await readLease(client);
    const holder = lease?.spec?.holderIdentity;
    return holder !== undefined && holder !== "" && holder !== not && lease;
  });
}

/** Milliseconds since the epoch of an RFC 3339 time, microseconds or not. */
export function epochMs(time: string | undefined): number {
  const ms = Date.parse(time ?? "");
  if (Number.isNaN(ms)) throw new TypeError(`not an RFC 3339 time: ${JSON.stringify(time)}`);
  return ms;
}
