/**
 * The flags of `kinglet run`, named as controller-runtime operators name
 * them, and their conversion into typed options.
 *
 * @example
 * ```ts
 * import { RUN_FLAGS, runOptions } from "./run_flags.ts";
 * import { parseFlags } from "./flags.ts";
 * const options = runOptions(parseFlags(RUN_FLAGS, ["--leader-elect"], {}).values);
 * options.leaderElect; // true
 * ```
 *
 * @module
 */
import { DEFAULT_BURST, DEFAULT_QPS } from "../kube/client.ts";
import { LOG_LEVELS, type LogFormat, type LogLevel } from "../log.ts";
import { MEMORY_LIMIT_FORMS, parseMemoryLimit } from "../runtime/memory/limit.ts";
import {
  type FlagSpec,
  type ParsedFlags,
  parseDuration,
  settingName,
  UsageError,
} from "./flags.ts";

/** The controllers `--controllers` can name. */
export const CONTROLLER_NAMES = ["webapp", "databasecluster", "inferenceservice"] as const;

/** One of {@link CONTROLLER_NAMES}. */
export type ControllerName = typeof CONTROLLER_NAMES[number];

/** The values of `--metrics-auth`. */
export const METRICS_AUTH = ["tokenreview", "none"] as const;
/** One of {@link METRICS_AUTH}. */
export type MetricsAuth = typeof METRICS_AUTH[number];

/** Flags shared by every command that talks to a cluster. */
export const CONNECTION_FLAGS: readonly FlagSpec[] = [
  {
    name: "kubeconfig",
    type: "string",
    help: "Path to a kubeconfig. Else KUBECONFIG, else in-cluster, else ~/.kube/config.",
  },
  { name: "context", type: "string", help: "The kubeconfig context to use." },
  {
    name: "log-format",
    type: "string",
    choices: ["json", "text"],
    help: "Log line format. Default: text when standard error is a terminal, json otherwise.",
  },
  {
    name: "log-level",
    type: "string",
    default: "info",
    choices: LOG_LEVELS,
    help: "Lowest level logged.",
  },
];

/** `--leader-elect`, of `kinglet run` and of an author's operator. */
export const LEADER_ELECT_FLAG: FlagSpec = {
  name: "leader-elect",
  type: "boolean",
  default: "false",
  help: "Take a Lease so one instance reconciles.",
};

/** `--memory-limit`, of `kinglet run` and of an author's operator, read by `parseMemoryLimit`. */
export const MEMORY_LIMIT_FLAG: FlagSpec = {
  name: "memory-limit",
  type: "memory",
  help:
    `Resident memory to stay under: ${MEMORY_LIMIT_FORMS} (0 also means none). It sizes the primary caches, list pages and concurrency from it, and as RSS nears it evicts cached objects, then runs fewer reconciles. Unset: the container's cgroup limit, if it has one.`,
};

/** Flags of `kinglet run`. */
export const RUN_FLAGS: readonly FlagSpec[] = [
  ...CONNECTION_FLAGS,
  {
    name: "namespace",
    type: "string",
    default: "",
    help: "Watch only this namespace; empty means all.",
  },
  {
    name: "controllers",
    type: "string",
    default: CONTROLLER_NAMES.join(","),
    help: `Comma-separated controllers to run, of ${CONTROLLER_NAMES.join(", ")}.`,
  },
  LEADER_ELECT_FLAG,
  {
    name: "leader-election-namespace",
    type: "string",
    default: "kinglet-system",
    help: "Namespace of the leader Lease.",
  },
  {
    name: "lease-name",
    type: "string",
    default: "kinglet-leader",
    help: "Name of the leader Lease.",
  },
  {
    name: "standby",
    type: "string",
    default: "cold",
    choices: ["cold", "warm"],
    help:
      "What a waiting --leader-elect instance holds: cold (nothing, least memory) or warm (its caches listed and watched, so it reconciles as soon as it leads).",
  },
  {
    name: "leader-election-id",
    type: "string",
    default: "",
    help: "This instance's identity in the Lease; defaults to hostname_random.",
  },
  {
    name: "metrics-bind-address",
    type: "address",
    help:
      "Address of /metrics and /debug/cache; 0 disables. Unset: 127.0.0.1:8080 on a node (loopback only), :8080 in a pod.",
  },
  {
    name: "metrics-auth",
    type: "string",
    choices: METRICS_AUTH,
    help:
      "Who may read /metrics and /debug/cache: tokenreview (a bearer token the API server authenticates and allows to get the path, as controller-runtime's secure metrics) or none. Unset: none on a loopback address, tokenreview on any other.",
  },
  {
    name: "health-probe-bind-address",
    type: "address",
    help:
      "Address of /healthz and /readyz (never protected); 0 disables. Unset: 127.0.0.1:8081 on a node, :8081 in a pod.",
  },
  {
    name: "webhooks",
    type: "boolean",
    default: "true",
    help:
      "Serve DatabaseCluster's webhooks while its controller runs: the conversion of v1alpha1 and the check of a named StorageClass. false turns them off; v1alpha1 requests then fail.",
  },
  {
    name: "webhook-bind-address",
    type: "address",
    help:
      "Address of the HTTPS webhook server the API server calls; 0 disables. Unset: 127.0.0.1:9443 on a node (the API server beside it), :9443 in a pod (behind the Service kinglet-webhook).",
  },
  {
    name: "webhook-cert-namespace",
    type: "string",
    help:
      "Namespace of the Secret kinglet-webhook-tls holding the webhooks' CA and certificate, shared by every instance; in a pod, the Service's too. Unset: --leader-election-namespace.",
  },
  {
    name: "max-concurrent-reconciles",
    type: "integer",
    default: "8",
    help: "Reconciles running at once, across all controllers, at most.",
  },
  {
    name: "pace-reconciles",
    type: "boolean",
    help:
      "No effect any more, and refused in a later release: kinglet runs up to --max-concurrent-reconciles whenever there is work. Remove it from command lines and units.",
  },
  {
    name: "controller-concurrency",
    type: "string",
    help:
      "A controller's own limit of reconciles at once, within --max-concurrent-reconciles, as name=N pairs: webapp=4,databasecluster=1 (controller-runtime's groupKindConcurrency). Unset: each may use the whole limit.",
  },
  {
    name: "cache-max-objects",
    type: "integer",
    default: "0",
    help: "Full objects each primary cache keeps; the rest are indexed and read live. 0: no cap.",
  },
  {
    name: "cache-max-bytes",
    type: "integer",
    default: "0",
    help: "Estimated bytes each primary cache keeps in full objects. 0: no cap.",
  },
  MEMORY_LIMIT_FLAG,
  {
    name: "shutdown-timeout",
    type: "duration",
    default: "10s",
    help: "How long SIGTERM waits for reconciles in flight.",
  },
  {
    name: "kube-api-qps",
    type: "string",
    default: String(DEFAULT_QPS),
    help: "Requests per second to the API server, sustained, watches included; 0: no limit.",
  },
  {
    name: "kube-api-burst",
    type: "integer",
    default: String(DEFAULT_BURST),
    help: "Requests to the API server sent at once before --kube-api-qps applies.",
  },
  {
    name: "watch-timeout",
    type: "duration",
    help:
      "Server-side timeout of each watch request (whole seconds); the watch is then resumed. Default: a random 5-10 min per request, as client-go does.",
  },
  {
    name: "watch-stall-timeout",
    type: "duration",
    help:
      "A watch silent this long (no event, no bookmark, not ended by the server) is restarted. Default: each watch's server-side timeout (5-10 min) plus 30 s, which a healthy quiet watch never reaches; set it shorter to notice half-open connections sooner.",
  },
];

/** Typed options of `kinglet run`. */
export interface RunOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  controllers: ControllerName[];
  leaderElect: boolean;
  leaderElectionNamespace: string;
  /** What a standby holds while another instance leads. */
  standby: "cold" | "warm";
  leaseName: string;
  leaderElectionId?: string;
  /** Unset: chosen by where kinglet runs; see endpointPlan. */
  metricsAddress?: string;
  metricsAuth?: MetricsAuth;
  healthAddress?: string;
  /** Whether DatabaseCluster's webhooks are served while its controller runs. */
  webhooks: boolean;
  /** Unset: chosen by where kinglet runs; see endpointPlan. */
  webhookAddress?: string;
  /** Where the webhooks' certificates (and, in a pod, their Service) live. */
  webhookCertNamespace: string;
  maxConcurrentReconciles: number;
  /** Controllers with a limit of their own; the others share `maxConcurrentReconciles`. */
  controllerConcurrency: Partial<Record<ControllerName, number>>;
  cacheMaxObjects?: number;
  cacheMaxBytes?: number;
  /** Bytes to stay under; 0 for none. Unset: the container's cgroup limit, if any. */
  memoryLimit?: number;
  shutdownTimeoutMs: number;
  /** Unset: a random 5-10 min per watch request. */
  watchTimeoutSeconds?: number;
  /** Unset: each watch's server-side timeout plus a grace. */
  watchStallTimeoutMs?: number;
  /** Client-side flow control: requests per second; 0 turns it off. */
  kubeApiQps: number;
  /** Client-side flow control: requests sent at once before the rate applies. */
  kubeApiBurst: number;
  /** Unset: text when standard error is a terminal, JSON otherwise. */
  logFormat: LogFormat | undefined;
  logLevel: LogLevel;
  /** Said once as kinglet starts: flags still accepted that do nothing any more. */
  warnings: string[];
}

/** Kept parseable so that units and Deployments that pass it still start. */
const PACE_RECONCILES_IGNORED =
  "--pace-reconciles has no effect any more and will be refused in a later release: " +
  "kinglet runs up to --max-concurrent-reconciles whenever there is work; remove the flag";

/**
 * Converts parsed flag values to {@link RunOptions}; `parsed` (what
 * `parseFlags` returned) names the variable, not the flag, in an error about
 * a value the environment set, and adds its warnings.
 *
 * @throws {UsageError} when a value is out of range.
 */
export function runOptions(
  values: Record<string, string | undefined>,
  parsed: Partial<Pick<ParsedFlags, "sources" | "warnings">> = {},
): RunOptions {
  const name = (flag: string) => settingName(flag, parsed.sources?.[flag]);
  const controllers = (values.controllers ?? "").split(",").map((c) => c.trim()).filter(Boolean);
  for (const c of controllers) {
    if (!CONTROLLER_NAMES.includes(c as ControllerName)) {
      throw new UsageError(
        `${name("controllers")}: unknown controller "${c}"; use ${CONTROLLER_NAMES.join(", ")}`,
      );
    }
  }
  if (controllers.length === 0) {
    throw new UsageError(`${name("controllers")}: name at least one controller`);
  }
  const max = Number(values["max-concurrent-reconciles"]);
  if (!(max >= 1)) {
    throw new UsageError(`${name("max-concurrent-reconciles")}: must be at least 1, got ${max}`);
  }
  const controllerConcurrency = parseConcurrency(
    values["controller-concurrency"],
    name("controller-concurrency"),
  );
  const metricsAuth = values["metrics-auth"] as MetricsAuth | undefined;
  const watchTimeoutText = values["watch-timeout"];
  const watchTimeout = watchTimeoutText === undefined ? undefined : parseDuration(watchTimeoutText);
  if (watchTimeout !== undefined && !(watchTimeout >= 1000 && watchTimeout % 1000 === 0)) {
    throw new UsageError(
      `${
        name("watch-timeout")
      }: must be a whole number of seconds, at least 1s, got ${watchTimeoutText}`,
    );
  }
  const stallText = values["watch-stall-timeout"];
  const stall = stallText === undefined ? undefined : parseDuration(stallText);
  if (stall !== undefined && !(stall > 0)) {
    throw new UsageError(
      `${name("watch-stall-timeout")}: must be longer than 0, got ${values["watch-stall-timeout"]}`,
    );
  }
  const qps = Number(values["kube-api-qps"] ?? DEFAULT_QPS);
  if (!(qps >= 0) || !Number.isFinite(qps)) {
    throw new UsageError(
      `${name("kube-api-qps")}: must be a number >= 0 (0 turns the limit off), got ${
        values["kube-api-qps"]
      }`,
    );
  }
  const burst = Number(values["kube-api-burst"] ?? DEFAULT_BURST);
  if (qps > 0 && !(burst >= 1)) {
    throw new UsageError(`${name("kube-api-burst")}: must be at least 1, got ${burst}`);
  }
  const memoryText = values["memory-limit"];
  // parseFlags has checked it, naming the flag or the variable that set it.
  const memoryLimit = memoryText === undefined ? undefined : parseMemoryLimit(memoryText);
  const positive = (name: string) => {
    const n = Number(values[name] ?? 0);
    return n > 0 ? n : undefined;
  };
  const optional = (name: string) => values[name] || undefined;
  return {
    ...(optional("kubeconfig") && { kubeconfig: values.kubeconfig }),
    ...(optional("context") && { context: values.context }),
    ...(optional("namespace") && { namespace: values.namespace }),
    ...(optional("leader-election-id") && { leaderElectionId: values["leader-election-id"] }),
    controllers: controllers as ControllerName[],
    leaderElect: values["leader-elect"] === "true",
    leaderElectionNamespace: values["leader-election-namespace"] ?? "kinglet-system",
    standby: values.standby === "warm" ? "warm" : "cold",
    leaseName: values["lease-name"] ?? "kinglet-leader",
    ...(values["metrics-bind-address"] !== undefined &&
      { metricsAddress: values["metrics-bind-address"] }),
    ...(metricsAuth !== undefined && { metricsAuth }),
    ...(values["health-probe-bind-address"] !== undefined &&
      { healthAddress: values["health-probe-bind-address"] }),
    webhooks: values.webhooks !== "false",
    ...(values["webhook-bind-address"] !== undefined &&
      { webhookAddress: values["webhook-bind-address"] }),
    webhookCertNamespace: values["webhook-cert-namespace"] ||
      (values["leader-election-namespace"] ?? "kinglet-system"),
    maxConcurrentReconciles: max,
    controllerConcurrency,
    ...(positive("cache-max-objects") && { cacheMaxObjects: positive("cache-max-objects") }),
    ...(positive("cache-max-bytes") && { cacheMaxBytes: positive("cache-max-bytes") }),
    ...(memoryLimit !== undefined && { memoryLimit }),
    shutdownTimeoutMs: parseDuration(values["shutdown-timeout"] ?? "10s") ?? 10_000,
    ...(watchTimeout !== undefined && { watchTimeoutSeconds: watchTimeout / 1000 }),
    ...(stall !== undefined && { watchStallTimeoutMs: stall }),
    kubeApiQps: qps,
    kubeApiBurst: burst,
    logFormat: values["log-format"] as LogFormat | undefined,
    logLevel: (values["log-level"] ?? "info") as RunOptions["logLevel"],
    warnings: [
      ...parsed.warnings ?? [],
      ...values["pace-reconciles"] === undefined ? [] : [PACE_RECONCILES_IGNORED],
    ],
  };
}

/**
 * `webapp=4,databasecluster=1` as a limit per controller.
 *
 * @throws {UsageError} naming the pair that is not `controller=N` with a known
 *   controller and a whole N >= 1.
 */
function parseConcurrency(
  text: string | undefined,
  setting: string,
): Partial<Record<ControllerName, number>> {
  const limits: Partial<Record<ControllerName, number>> = {};
  for (const pair of (text ?? "").split(",").map((p) => p.trim()).filter(Boolean)) {
    const [name, value] = pair.split("=");
    const n = Number(value);
    if (!CONTROLLER_NAMES.includes(name as ControllerName)) {
      throw new UsageError(
        `${setting}: unknown controller "${name}" in "${pair}"; use ${CONTROLLER_NAMES.join(", ")}`,
      );
    }
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new UsageError(
        `${setting}: "${pair}" needs a whole number of at least 1, as in ${name}=2`,
      );
    }
    limits[name as ControllerName] = n;
  }
  return limits;
}
