/**
 * `kinglet run`: connects, builds the manager with the chosen controllers,
 * and runs it until SIGTERM/SIGINT (exit 0) or a lost Lease (exit 1, so the
 * supervisor restarts it as a candidate). Credentials narrower than the
 * run's scope are refused before it starts (exit 2, a configuration error).
 *
 * With the databasecluster controller it serves DatabaseCluster's webhooks
 * on every instance, leader or not (unless `--webhooks=false`): the
 * conversion of `v1alpha1` and the StorageClass check. On a node the API
 * server beside it calls `https://127.0.0.1:9443` (the configurations
 * `kinglet install --node-kubeconfig` applies); in a pod, the Service
 * `kinglet-webhook` of deploy/. The certificates live in the Secret
 * `kinglet-webhook-tls`, shared by every instance.
 *
 * @example
 * ```ts
 * import { runOperator } from "./run.ts";
 * import type { RunOptions } from "./run_flags.ts";
 * declare const options: RunOptions;
 * const stop = new AbortController();
 * const exitCode = await runOperator(options, stop.signal);
 * ```
 *
 * @module
 */
import { KubeClient } from "../kube/client.ts";
import { type ClusterConfig, loadConfig } from "../kube/config.ts";
import { logger } from "../log.ts";
import { databaseClusterAdmission } from "../operators/database/admission.ts";
import { databaseClusterConversion } from "../operators/database/conversion.ts";
import { databaseClusterController } from "../operators/database/reconcile.ts";
import { inferenceServiceController } from "../operators/inference/reconcile.ts";
import { webAppController } from "../operators/webapp/reconcile.ts";
import type { ControllerSpec } from "../runtime/controller/spec.ts";
import { Manager } from "../runtime/manager/manager.ts";
import { tokenReviewAuth } from "../runtime/manager/endpoint_auth.ts";
import { RuntimeMetrics } from "../runtime/metrics/metrics.ts";
import { cgroupMemoryLimit } from "../runtime/memory/cgroup.ts";
import { isDisabled } from "../runtime/manager/http.ts";
import type { WebhookServingOptions } from "../runtime/webhook/serving.ts";
import { ConfigError } from "../kube/errors.ts";
import { resourceName } from "../kube/resources.ts";
import type { KubeObject, Resource } from "../kube/types.ts";
import { checkCrds, crdInstallHint } from "./crd_check.ts";
import { checkCredentialsScope, ScopeError } from "./credentials_scope.ts";
import { type EndpointPlan, endpointPlan } from "./endpoints.ts";
import { explainPermissionError } from "./permissions.ts";
import { VERSION } from "./version.ts";
import type { ControllerName, RunOptions } from "./run_flags.ts";

/** The spec of each controller `kinglet run` can run, by its name in `--controllers`. */
export const CONTROLLERS: Readonly<Record<ControllerName, () => ControllerSpec<KubeObject>>> = {
  webapp: () => webAppController(),
  databasecluster: () => databaseClusterController(),
  inferenceservice: () => inferenceServiceController(),
};

/**
 * Runs the operator until `signal` aborts; resolves to the process exit code.
 *
 * @throws {ConfigError} when the kubeconfig or in-cluster setup is unusable.
 */
export async function runOperator(options: RunOptions, signal: AbortSignal): Promise<number> {
  const log = logger("main");
  for (const warning of options.warnings) log.warn(warning);
  const config = await loadConfig({
    ...(options.kubeconfig && { kubeconfig: options.kubeconfig }),
    ...(options.context && { context: options.context }),
  });
  const metrics = new RuntimeMetrics();
  const client = new KubeClient(config, {
    onRequest: metrics.observeRequest,
    onRateLimited: metrics.observeRateLimit,
    qps: options.kubeApiQps,
    burst: options.kubeApiBurst,
  });
  const identity = options.leaderElectionId ??
    `${Deno.hostname()}_${crypto.randomUUID().slice(0, 8)}`;
  const budget = options.cacheMaxObjects || options.cacheMaxBytes
    ? {
      ...(options.cacheMaxObjects && { maxObjects: options.cacheMaxObjects }),
      ...(options.cacheMaxBytes && { maxBytes: options.cacheMaxBytes }),
    }
    : undefined;
  const memoryLimit = chooseMemoryLimit(options.memoryLimit);
  const inCluster = config.source === "in-cluster";
  const endpoints = endpointPlan(options, { inCluster });
  const webhook = webhookServing(options, endpoints, inCluster);
  const manager = new Manager({
    client,
    metrics,
    maxConcurrentReconciles: options.maxConcurrentReconciles,
    // The manager's Events say "kinglet" from this identity, and are flushed as it stops.
    reportingInstance: identity,
    metricsAddress: endpoints.metricsAddress,
    healthAddress: endpoints.healthAddress,
    ...(endpoints.metricsAuth === "tokenreview" && { metricsAuth: tokenReviewAuth(client) }),
    drainTimeoutMs: options.shutdownTimeoutMs,
    watcherOptions: {
      ...(options.watchTimeoutSeconds !== undefined &&
        { timeoutSeconds: options.watchTimeoutSeconds }),
      ...(options.watchStallTimeoutMs !== undefined &&
        { stallTimeoutMs: options.watchStallTimeoutMs }),
    },
    ...(options.namespace && { namespace: options.namespace }),
    ...(budget && { budget }),
    ...(memoryLimit && { memoryLimit }),
    ...(webhook && { webhook }),
    ...(options.leaderElect && {
      leaderElection: {
        namespace: options.leaderElectionNamespace,
        name: options.leaseName,
        identity,
      },
      standby: options.standby,
    }),
  });
  const specs = options.controllers.map((name): ControllerSpec<KubeObject> => {
    const limit = options.controllerConcurrency[name];
    return { ...CONTROLLERS[name](), ...(limit && { maxConcurrentReconciles: limit }) };
  });
  for (const spec of specs) manager.add(spec);
  if (webhook) {
    manager.addWebhook(databaseClusterConversion);
    manager.addWebhook(databaseClusterAdmission);
  }
  log.info("kinglet {version} starting: {controllers} against {server} ({source}) as {identity}", {
    version: VERSION,
    controllers: options.controllers.join(","),
    server: config.server,
    source: config.source,
    identity,
  });
  try {
    await preflight(client, config, specs[0]!.resource, options.namespace, signal);
    await warnAboutCrds(client, specs.map((s) => s.resource), inCluster, signal);
    const outcome = await manager.run(signal);
    if (outcome === "stopped") return 0;
    log.warn(
      "exiting with status 1 after losing the leader Lease (kinglet.leader said why above), " +
        "so that systemd (Restart=on-failure) or the kubelet starts kinglet again as a candidate",
    );
    return 1;
  } finally {
    client.close();
  }
}

/**
 * Where DatabaseCluster's webhooks are served, or undefined when they are
 * not: its controller is not run, `--webhooks=false`, or the address is 0.
 */
function webhookServing(
  options: RunOptions,
  endpoints: EndpointPlan,
  inCluster: boolean,
): WebhookServingOptions | undefined {
  const wanted = options.webhooks && options.controllers.includes("databasecluster");
  if (!wanted || isDisabled(endpoints.webhookAddress)) return undefined;
  const namespace = options.webhookCertNamespace;
  return {
    operator: "kinglet",
    address: endpoints.webhookAddress,
    certificates: { namespace },
    // deploy/ puts the Service beside the Deployment, in the namespace of the Lease.
    ...(inCluster && { service: { namespace } }),
  };
}

/**
 * The limit `--memory-limit` names, else the container's; logs where it came
 * from. Zero (`--memory-limit none`) and no cgroup limit are no limit.
 */
function chooseMemoryLimit(flag: number | undefined): number | undefined {
  const found = flag === undefined ? cgroupMemoryLimit() : undefined;
  const bytes = flag ?? found?.bytes;
  if (!bytes) return undefined;
  logger("main").info("keeping resident memory under {limitMiB} MiB, from {source}", {
    limitMiB: Math.round(bytes / 2 ** 20 * 10) / 10,
    source: found ? found.path : "--memory-limit",
  });
  return bytes;
}

/** How long the start-up request may take before the watchers take over. */
const PREFLIGHT_TIMEOUT_MS = 10_000;

/**
 * Lists the primary kind at the run's scope before anything starts, so that
 * what no retry can fix ends the process with its message instead of being
 * retried by every watcher forever: a missing or broken exec plugin, a
 * kubeconfig asking for what Deno cannot do (insecure-skip-tls-verify), a
 * denied Deno permission (exit 1), credentials narrower than the run's scope
 * (exit 2, see credentials_scope.ts). Anything else (an unreachable server,
 * a TLS failure, a missing CRD) is left to the watchers, which log it, retry
 * with backoff and keep `/readyz` failing with the reason.
 */
async function preflight(
  client: KubeClient,
  config: ClusterConfig,
  resource: Resource,
  namespace: string | undefined,
  signal: AbortSignal,
): Promise<void> {
  try {
    await checkCredentialsScope(client, resource, {
      ...(namespace && { namespace }),
      config,
      // The scope check asks a 403 again for PREFLIGHT_TIMEOUT_MS, then once more where it serves.
      signal: AbortSignal.any([signal, AbortSignal.timeout(3 * PREFLIGHT_TIMEOUT_MS)]),
    });
  } catch (error) {
    if (
      error instanceof ConfigError || error instanceof ScopeError || explainPermissionError(error)
    ) throw error;
  }
}

/**
 * Says in one line, with the command that fixes it, when a CRD is missing or
 * was installed from another kinglet, then carries on: the watchers wait for
 * a missing CRD, and an old one may still serve. A server that cannot be
 * reached is left to the watchers, as in {@link preflight}.
 */
async function warnAboutCrds(
  client: KubeClient,
  resources: Resource[],
  inCluster: boolean,
  signal: AbortSignal,
): Promise<void> {
  const names = resources.map(resourceName);
  try {
    const problem = await checkCrds(
      client,
      names,
      crdInstallHint({ inCluster }),
      AbortSignal.any([signal, AbortSignal.timeout(PREFLIGHT_TIMEOUT_MS)]),
    );
    if (problem) logger("main").warn(problem);
  } catch (error) {
    if (error instanceof ConfigError || explainPermissionError(error)) throw error;
  }
}
