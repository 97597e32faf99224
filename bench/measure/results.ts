/**
 * The shape of `results.json`: everything a benchmark run measured, raw
 * (every process sample, every metrics scrape, every object's timings) and
 * summarised (the figures of the report). The report, the charts and compare
 * mode read only this file, so a run can be re-rendered or compared later.
 *
 * Times named `...Ms` or `t` are milliseconds since the start of their run,
 * on the harness' monotonic clock.
 *
 * @example
 * ```ts ignore
 * import { readResults } from "./results.ts";
 * const results = await readResults("bench/results/2026-01-01T00-00-00Z/results.json");
 * results.runs.map((run) => `${run.id}: ${run.figures.rssPeakBytes} bytes peak`);
 * ```
 *
 * @module
 */
import { z } from "zod";

/** Identifies the format; bumped when a field changes meaning. */
export const RESULTS_FORMAT = "kinglet-bench/v1";

/** The scenarios there are (bench/harness/scenarios.ts runs them); a run's `scenario` is one. */
export const SCENARIO_NAMES = [
  "idle",
  "scale",
  "budget",
  "restart",
  "failover",
  "backlog",
  "edited",
  "admission",
] as const;
export type ScenarioName = typeof SCENARIO_NAMES[number];

/**
 * Says that the target `name`, which runs `runs`, is left out of
 * `scenario`, and why; `undefined` when it runs it. The harness prints it as
 * it plans, and the report puts it under the scenario's table.
 *
 * @example
 * ```ts
 * import { leftOutNote } from "./results.ts";
 * leftOutNote("deno-floor", ["idle"], "scale"); // "deno-floor is left out of scale (it runs idle)"
 * ```
 */
export function leftOutNote(
  name: string,
  runs: readonly string[],
  scenario: string,
): string | undefined {
  if (runs.includes(scenario)) return undefined;
  const note = `${name} is left out of ${scenario} (it runs ${runs.join(", ")})`;
  if (scenario === "failover") {
    return `${note}: failover runs two candidates, which needs a \`leaderElection\` in the target file`;
  }
  if (scenario === "admission") {
    return `${note}: admission needs a webhook, \`{webhookPort}\` in the command and ` +
      "`webhookConfigurations` in the target file";
  }
  return note;
}

const optionalNumber = z.number().optional();

/** One reading of the operator's process tree from /proc. */
export const processSampleSchema = z.object({
  t: z.number(),
  /** Which operator process this is, counting restarts from 0. */
  process: z.number().int().nonnegative(),
  rssBytes: z.number().nonnegative(),
  /** VmHWM: the kernel's own record of peak RSS. */
  hwmBytes: z.number().nonnegative(),
  /** User plus system CPU time since the process started. */
  cpuSeconds: z.number().nonnegative(),
  /** Processes in the tree (the operator and its children). */
  processes: z.number().int().positive(),
});
export type ProcessSample = z.infer<typeof processSampleSchema>;

/** One Prometheus series as scraped. */
export const seriesSchema = z.object({
  name: z.string(),
  labels: z.record(z.string(), z.string()),
  value: z.number(),
});
export type Series = z.infer<typeof seriesSchema>;

/** The series of interest from one scrape of `/metrics`. */
export const scrapeSchema = z.object({
  t: z.number(),
  process: z.number().int().nonnegative(),
  series: z.array(seriesSchema),
});
export type Scrape = z.infer<typeof scrapeSchema>;

/** A named stretch of a run, e.g. `create` or `hold`. */
export const phaseSchema = z.object({
  name: z.string(),
  startMs: z.number(),
  endMs: z.number(),
});
export type Phase = z.infer<typeof phaseSchema>;

/** When the harness acted on one object and when the operator answered. */
export const objectTimingSchema = z.object({
  name: z.string(),
  /** The create request was sent. */
  createdMs: z.number(),
  /** The object was first seen satisfying the target's readiness rule. */
  readyMs: optionalNumber,
  /** The update patch was sent (only for the updated share). */
  updatedMs: optionalNumber,
  /** The updated generation was first seen observed and ready. */
  updateReadyMs: optionalNumber,
  /** The updated generation was first seen observed (`observedGeneration`), Ready or not. */
  updateObservedMs: optionalNumber,
  /** The delete request was sent. */
  deletedMs: optionalNumber,
  /** The watch reported the object deleted. */
  goneMs: optionalNumber,
});
export type ObjectTiming = z.infer<typeof objectTimingSchema>;

/**
 * The restart scenario's own figures: the operator created N objects and
 * made them Ready, was stopped (SIGTERM), and was spawned again to find all N
 * as its backlog; once it was up one object was edited. Times count from the
 * second spawn unless said otherwise. Its API calls, reconciles, CPU and peak
 * RSS are the run's own `apiCalls`, `reconciles`, `cpuSeconds` and
 * `rssPeakBytes`, which in this scenario are the restarted process' alone,
 * over the `restart` phase.
 */
export const restartSchema = z.object({
  /** When the operator was spawned again, in milliseconds since the run started. */
  spawnedMs: z.number(),
  /** From the spawn until `/readyz` first answered 200 (polled every 100 ms). */
  readyzMs: z.number(),
  /** The object edited: the last by name. */
  edited: z.string(),
  /** From the spawn until the edit was sent: `/readyz` had answered 200 and 1 s had passed. */
  editSentMs: optionalNumber,
  /**
   * From sending the edit until the object was seen Ready at its new
   * generation; absent when the target's rule has no `observedGenerationPath`.
   */
  editObservedMs: optionalNumber,
  /**
   * From the spawn until `/metrics` first counted a reconcile (the sum of
   * `controller_runtime_reconcile_total`, polled every 100 ms); absent when
   * the target exports no such metric.
   */
  firstReconcileMs: optionalNumber,
  /**
   * From the spawn until `/metrics` counted N + 1 reconciles, one per object
   * of the backlog and one for the edit; absent when the target exports no
   * such metric or did not reach the count within `--ready-timeout`.
   */
  reconciledMs: optionalNumber,
});
export type Restart = z.infer<typeof restartSchema>;

/** What the restart scenario measures as it runs; the rest of {@link Restart} is computed. */
export type RestartMarks = Pick<
  Restart,
  "spawnedMs" | "readyzMs" | "edited" | "firstReconcileMs" | "reconciledMs"
>;

/**
 * The failover scenario's own figures: two candidates of the target ran with
 * leader election, the first holding the Lease, while N objects were made
 * Ready; the holder was killed (SIGKILL) and, about 1 s later, one object
 * edited. Times count from the kill unless said otherwise. Its API calls,
 * reconciles, CPU and peak RSS are the run's own `apiCalls`, `reconciles`,
 * `cpuSeconds` and `rssPeakBytes`: the successor's (process 1), its counters
 * and CPU over the `kill` and `failover` phases.
 */
export const failoverSchema = z.object({
  /** When the holder was sent SIGKILL, in milliseconds since the run started. */
  killedMs: z.number(),
  /** The identity of the candidate killed, the Lease's holder: the first. */
  killed: z.string(),
  /** The identity of the candidate expected to take over: the second. */
  successor: z.string(),
  /** The object edited: the last by name. */
  edited: z.string(),
  /**
   * The successor's RSS in the sample taken just before the kill: what a
   * standby holds (`--standby cold` against `warm`).
   */
  standbyRssBytes: optionalNumber,
  /** From the kill until the Lease named the successor (read every 100 ms). */
  takeoverMs: optionalNumber,
  /** From the kill until the edit was sent (about 1 s). */
  editSentMs: optionalNumber,
  /**
   * From sending the edit until the object was seen Ready at its new
   * generation; absent when the target's rule has no `observedGenerationPath`.
   */
  editObservedMs: optionalNumber,
  /** From the kill until the successor's `/metrics` first counted a reconcile. */
  firstReconcileMs: optionalNumber,
  /**
   * From the kill until the successor's `/metrics` counted N + 1 reconciles
   * (the sum of `controller_runtime_reconcile_total`, polled every 100 ms);
   * absent when the target exports no such metric or did not reach the count
   * within `--ready-timeout`.
   */
  reconciledMs: optionalNumber,
});
export type Failover = z.infer<typeof failoverSchema>;

/** What the failover scenario measures as it runs; the rest of {@link Failover} is computed. */
export type FailoverMarks = Pick<
  Failover,
  | "killedMs"
  | "killed"
  | "successor"
  | "edited"
  | "takeoverMs"
  | "firstReconcileMs"
  | "reconciledMs"
>;

/**
 * The backlog and edited scenarios' own figures: the operator was spawned to
 * find work that piled up while none ran (N objects created, their children
 * absent; or N objects updated since it last made them Ready), and once it
 * was up the last object by name was edited. Times count from the spawn. Its
 * API calls, reconciles, CPU and peak RSS are the run's own `apiCalls`,
 * `reconciles`, `cpuSeconds` and `rssPeakBytes`, which in these scenarios are
 * the spawned process' alone, over the `catch-up` phase.
 */
export const catchUpSchema = z.object({
  /** When the operator was spawned (in edited, again), in milliseconds since the run started. */
  spawnedMs: z.number(),
  /** From the spawn until `/readyz` first answered 200 (polled every 100 ms). */
  readyzMs: z.number(),
  /** The object edited: the last by name. */
  edited: z.string(),
  /** From the spawn until the edit was sent: `/readyz` had answered 200 and 1 s had passed. */
  editSentMs: optionalNumber,
  /**
   * From the spawn (not from sending, as restart's) until the edited object
   * was seen Ready at its new generation; absent when the target's rule has
   * no `observedGenerationPath`.
   */
  editObservedMs: optionalNumber,
  /**
   * From sending the edit until the edited object's `observedGeneration` was
   * first seen at its new generation, Ready or not: how long the user's edit
   * waited behind the backlog before the operator took it in. Absent when
   * the target's rule has no `observedGenerationPath`.
   */
  editTakenMs: optionalNumber,
  /**
   * From the spawn until the last of the N objects was seen Ready at the
   * generation in effect (an object updated or edited at its new one);
   * absent when the target's rule has no `observedGenerationPath`.
   */
  convergedMs: optionalNumber,
  /**
   * The median and 0.99 quantile of the spawned process' API request
   * latency, from its `rest_client_request_duration_seconds` histogram at the
   * end of the phase; absent when the target exports no such histogram.
   */
  requestP50Seconds: optionalNumber,
  requestP99Seconds: optionalNumber,
});
export type CatchUp = z.infer<typeof catchUpSchema>;

/** What the backlog and edited scenarios measure as they run; the rest of {@link CatchUp} is computed. */
export type CatchUpMarks = Pick<CatchUp, "spawnedMs" | "readyzMs" | "edited">;

/**
 * Restart records of two earlier kinds of the scenario are read as absent, so
 * that older files still load: those that restarted without an edit (with
 * `stopMs`), and those whose N objects were created before any operator ran
 * (with `convergedMs`), whose edit waited on Deployments still being made.
 * The file on disk is left as it is.
 */
function withoutEarlierKinds(value: unknown): unknown {
  const earlier = typeof value === "object" && value !== null &&
    ("stopMs" in value || "convergedMs" in value);
  return earlier ? undefined : value;
}

/** Latency percentiles in milliseconds. */
export const percentilesSchema = z.object({
  count: z.number().int().nonnegative(),
  p50: z.number(),
  p90: z.number(),
  p99: z.number(),
  max: z.number(),
});
export type Percentiles = z.infer<typeof percentilesSchema>;

/**
 * The admission scenario's own figures: with the target's webhook
 * configuration applied and its operator serving it, the harness sent
 * server-side dry-run creates of the target's kind at a fixed rate for a
 * fixed time, each admitted by the API server calling the operator's
 * webhook, and timed each as its client saw it, from sending the request to
 * the response. The operator's CPU over the phase is the run's own
 * `cpuSeconds`.
 */
export const admissionSchema = z.object({
  /** The rate the requests were sent at, per second. */
  ratePerSecond: z.number().positive(),
  /** From the first request sent until the last was answered. */
  durationMs: z.number().nonnegative(),
  /** Requests sent. */
  sent: z.number().int().nonnegative(),
  /**
   * Requests that failed: an error from the API server (a webhook that could
   * not be called, timed out or denied), or no answer.
   */
  errors: z.number().int().nonnegative(),
  /** The first failure's message, when there was one. */
  firstError: z.string().optional(),
  /** Milliseconds from sending a request to its answer, over the requests answered with success. */
  latency: percentilesSchema.optional(),
  /** Mean RSS of the operator over the phase. */
  rssMeanBytes: optionalNumber,
  /**
   * Growth of the operator's `controller_runtime_webhook_requests_total` over
   * the phase: the calls its webhook answered; absent when not exported.
   */
  served: optionalNumber,
  /**
   * The median and 0.99 quantile of the operator's own
   * `controller_runtime_webhook_latency_seconds` over the phase (its handling
   * of a call, without the API server's part or the connection),
   * interpolated within buckets; absent when not exported.
   */
  serverP50Seconds: optionalNumber,
  serverP99Seconds: optionalNumber,
  /**
   * The same requests sent, before the phase, into `kube-system`, which the
   * webhook configurations skip: the API server's path without the webhook.
   * Absent for a cluster-scoped kind.
   */
  control: z.object({
    sent: z.number().int().nonnegative(),
    errors: z.number().int().nonnegative(),
    /** The calls the webhook counted over the phase: none, when the configurations skip it. */
    served: optionalNumber,
    latency: percentilesSchema.optional(),
  }).optional(),
});
export type Admission = z.infer<typeof admissionSchema>;

/** What the admission scenario measures as it runs; the RSS of {@link Admission} is computed. */
export interface AdmissionMarks {
  ratePerSecond: number;
  durationMs: number;
  /** Per request answered with success, milliseconds from sending it to the answer. */
  latenciesMs: number[];
  /** Requests sent. */
  sent: number;
  errors: number;
  firstError?: string;
  /** The control phase's requests, where no webhook is called. */
  control?: { latenciesMs: number[]; sent: number; errors: number };
}

/** The summary figures of one run; see bench/README.md for each definition. */
export const figuresSchema = z.object({
  rssIdleBytes: optionalNumber,
  rssPeakBytes: optionalNumber,
  rssSteadyBytes: optionalNumber,
  cpuSeconds: optionalNumber,
  reconciles: optionalNumber,
  cpuSecondsPer1000Reconciles: optionalNumber,
  createReady: percentilesSchema.optional(),
  updateReady: percentilesSchema.optional(),
  reconcileP99Seconds: optionalNumber,
  apiCalls: optionalNumber,
  apiCallsPerObject: optionalNumber,
  cacheEvictions: optionalNumber,
  restart: z.preprocess(withoutEarlierKinds, restartSchema.optional()),
  failover: failoverSchema.optional(),
  catchUp: catchUpSchema.optional(),
  admission: admissionSchema.optional(),
});
export type Figures = z.infer<typeof figuresSchema>;

/** A V8 flag set and concurrency setting the operator ran with. */
export const variantSchema = z.object({
  /** Short label, e.g. `default` or `semi1+lite c4`. */
  name: z.string(),
  v8Flags: z.array(z.string()),
  concurrency: z.number().int().positive().optional(),
});
export type Variant = z.infer<typeof variantSchema>;

/** How long one run's background took to create and settle (`--background`). */
export const backgroundTimesSchema = z.object({
  /** Creating every object at the background's rate. */
  createMs: z.number(),
  /** From the last create until every Deployment of the background had its replicas available. */
  availableMs: z.number(),
});
export type BackgroundTimes = z.infer<typeof backgroundTimesSchema>;

/** One scenario at one size with one variant of one target. */
export const runSchema = z.object({
  /**
   * Unique within the results, e.g. `scale-1000 default`; with several targets
   * the target's name comes before the variant: `scale-1000 kinglet default`.
   */
  id: z.string(),
  /** The target's name; absent in results written before several targets could share a file. */
  target: z.string().optional(),
  /** `idle`, `scale-1000`, `budget-1000`: runs of one group share a table row set and charts. */
  group: z.string(),
  scenario: z.string(),
  size: z.number().int().nonnegative(),
  variant: variantSchema,
  cacheMaxObjects: z.number().int().positive().optional(),
  /** The operator's argv as spawned (first process). */
  command: z.array(z.string()),
  startedAt: z.string(),
  durationMs: z.number(),
  phases: z.array(phaseSchema),
  samples: z.array(processSampleSchema),
  scrapes: z.array(scrapeSchema),
  objects: z.array(objectTimingSchema),
  /** Set when a background was created before the operator started. */
  background: backgroundTimesSchema.optional(),
  figures: figuresSchema,
  /** Set when the run failed; its figures cover what was measured until then. */
  error: z.string().optional(),
});
export type Run = z.infer<typeof runSchema>;

/** The machine the benchmark ran on. */
export const machineSchema = z.object({
  cores: z.number().int().positive(),
  memoryBytes: z.number().nonnegative(),
  cpuModel: z.string(),
  os: z.string(),
  kernel: z.string(),
  /** 1, 5 and 15 minute load averages when the benchmark started; others may share the box. */
  loadAverage: z.array(z.number()),
});
export type Machine = z.infer<typeof machineSchema>;

/** Versions of everything that shapes the figures. */
export const versionsSchema = z.object({
  deno: z.string(),
  v8: z.string(),
  typescript: z.string(),
  kubernetes: z.string(),
  /** What the API server stored in (etcd, kine); absent in results from before it was recorded. */
  datastore: z.string().optional(),
  kinglet: z.string(),
  /** The commit of the working tree, with `-dirty` when it has changes. */
  commit: z.string(),
  target: z.string(),
});
export type Versions = z.infer<typeof versionsSchema>;

/** A measured target as recorded. */
export const targetRecordSchema = z.object({
  name: z.string(),
  /** The target file, relative to the folder the harness ran in. */
  file: z.string(),
  replicas: z.number().int(),
  description: z.string().optional(),
  /**
   * The scenarios the target can run; absent in results written before
   * targets could decline one. The report names those left out of a group.
   */
  scenarios: z.array(z.string()).optional(),
});
export type TargetRecord = z.infer<typeof targetRecordSchema>;

/** Objects of one kind in a background. */
export const backgroundKindSchema = z.object({
  kind: z.string(),
  count: z.number().int().nonnegative(),
  /** Bytes of the objects' JSON as sent, summed. */
  bytes: z.number().int().nonnegative(),
  /** Bytes of the smallest and of the largest object's JSON. */
  minBytes: z.number().int().nonnegative(),
  maxBytes: z.number().int().nonnegative(),
});

/** What every run's cluster held before its operator started (bench/harness/background.ts). */
export const backgroundSchema = z.object({
  /** The preset, e.g. `realistic`. */
  name: z.string(),
  seed: z.number(),
  namespaces: z.array(z.string()),
  /** Replicas of each of its Deployments. */
  replicas: z.number().int().nonnegative(),
  /** Objects created per second. */
  ratePerSecond: z.number().positive(),
  /** Per kind, in creation order. */
  kinds: z.array(backgroundKindSchema),
});
export type BackgroundRecord = z.infer<typeof backgroundSchema>;

/** The whole `results.json`. */
export const resultsSchema = z.object({
  format: z.literal(RESULTS_FORMAT),
  startedAt: z.string(),
  finishedAt: z.string(),
  /** The options the harness ran with, as parsed. */
  options: z.record(z.string(), z.unknown()),
  machine: machineSchema,
  versions: versionsSchema,
  /** The first target: the only one, or the reference of the side-by-side ratios. */
  target: targetRecordSchema,
  /** Every target in the order given; absent in results written before there could be several. */
  targets: z.array(targetRecordSchema).optional(),
  /** The background of every run; absent for an empty cluster (`--background none`). */
  background: backgroundSchema.optional(),
  runs: z.array(runSchema),
});
export type Results = z.infer<typeof resultsSchema>;

/**
 * Parses and validates the text of a `results.json`.
 *
 * @throws {TypeError} naming the first fields that do not match the schema.
 */
export function parseResults(text: string, source = "results.json"): Results {
  return parseResultsAs(resultsSchema, text, source);
}

/**
 * Parses and validates JSON `text` against `schema`, the results' own or
 * one derived from it (the summary's).
 *
 * @throws {TypeError} naming the first fields that do not match the schema.
 */
export function parseResultsAs<T>(schema: z.ZodType<T>, text: string, source: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TypeError(`Cannot read ${source}: not JSON (${(error as Error).message})`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((issue) =>
      `${issue.path.join(".") || "(root)"}: ${issue.message}`
    );
    throw new TypeError(
      `Cannot read ${source}: not a kinglet benchmark result: ${issues.join("; ")}`,
    );
  }
  return parsed.data;
}

/** Reads and validates a `results.json` file. */
export async function readResults(path: string): Promise<Results> {
  return parseResults(await Deno.readTextFile(path), path);
}
