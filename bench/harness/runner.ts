/**
 * Plans and executes the runs: every scenario, at every size for the sized
 * ones, for every target, with every variant (V8 flag set × concurrency),
 * each on a control plane of its own with the target's CRDs installed and the
 * operator started as a separate process. A failed run is recorded with its
 * error and the control plane's logs, and the next run goes on.
 *
 * @example
 * ```ts ignore
 * import { planRuns, resolveVariants, runAll } from "./runner.ts";
 * const plans = planRuns(options, [kinglet, peer]);
 * const runs = await runAll(plans, { options, progress, outDir, signal }, async () => {});
 * ```
 *
 * @module
 */
import { join } from "node:path";
import { BACKGROUNDS, fillBackground } from "./background.ts";
import {
  applyWebhookConfigurations,
  type BenchCluster,
  installCrds,
  provideCluster,
} from "./cluster_setup.ts";
import { freePorts } from "../../lib/testing/control_plane/mod.ts";
import { computeFigures, type ScenarioMarks } from "../measure/figures.ts";
import { type BenchOptions, flagSetName, type VariantSpec } from "./options.ts";
import { OperatorProcess } from "./operator_process.ts";
import { removeObjects } from "./load.ts";
import { ReadinessTracker } from "../measure/readiness_tracker.ts";
import { RunRecorder } from "../measure/recorder.ts";
import type { BackgroundTimes, Run, ScenarioName, Variant } from "../measure/results.ts";
import type { Scenario } from "./scenario_steps.ts";
import { SCENARIOS } from "./scenarios.ts";
import type { Progress } from "./progress.ts";
import { objectScope, supports, type Target } from "./target.ts";

/** One run to do. */
export interface PlannedRun {
  id: string;
  group: string;
  target: Target;
  scenario: ScenarioName;
  size: number;
  variant: Variant;
  cacheMaxObjects?: number;
}

/** What the runs need. */
export interface RunnerContext {
  options: BenchOptions;
  progress: Progress;
  outDir: string;
  signal: AbortSignal;
}

/**
 * Names the variants and drops duplicates (the target's own flags may equal
 * a set of the matrix).
 *
 * @throws {RangeError} when the target's command has no place for a setting asked for.
 */
export function resolveVariants(specs: readonly VariantSpec[], target: Target): Variant[] {
  const seen = new Set<string>();
  const variants: Variant[] = [];
  for (const spec of specs) {
    const v8Flags = spec.v8Flags === "shipped" ? target.defaultV8Flags : [...spec.v8Flags];
    if (spec.v8Flags !== "shipped" && !supports(target, "v8Flags")) {
      throw new RangeError(
        `Cannot compare V8 flag sets: the target ${target.name} has no {v8Flags} in its command`,
      );
    }
    if (spec.concurrency !== undefined && !supports(target, "concurrency")) {
      throw new RangeError(
        `Cannot compare concurrency: the target ${target.name} has no {concurrency} in its command`,
      );
    }
    const name = flagSetName(v8Flags) +
      (spec.concurrency === undefined ? "" : ` c${spec.concurrency}`);
    if (seen.has(name)) continue;
    seen.add(name);
    variants.push({
      name,
      v8Flags,
      ...(spec.concurrency !== undefined && { concurrency: spec.concurrency }),
    });
  }
  return variants;
}

/**
 * Every run, scenario by scenario and size by size, the targets and their
 * variants of one group back to back so that they see the machine in the
 * same state. With several targets a run's id names its target.
 *
 * A target runs only the scenarios it lists (all by default).
 *
 * @throws {RangeError} when two targets share a name (their rows could not be told apart), for
 * the budget scenario when a target cannot take a cache budget, for a scenario no target runs,
 * or for a variant a target's command has no place for.
 */
export function planRuns(options: BenchOptions, targets: readonly Target[]): PlannedRun[] {
  const names = targets.map((t) => t.name);
  const twice = targets.find((t, i) => names.indexOf(t.name) !== i);
  if (twice !== undefined) {
    throw new RangeError(
      `Cannot run two targets named ${twice.name} side by side (${twice.file} is the second): ` +
        "give one of them another name, which the report shows",
    );
  }
  const variantsOf = new Map(targets.map((t) => [t, resolveVariants(options.variants, t)]));
  const plans: PlannedRun[] = [];
  for (const scenario of options.scenarios) {
    const definition = SCENARIOS[scenario];
    const unable = targets.find((t) =>
      t.scenarios.includes(scenario) && !supports(t, "cacheMaxObjects")
    );
    if (definition.cacheMaxObjects && unable) {
      throw new RangeError(
        `Cannot run '${scenario}': the target ${unable.name} has no {cacheMaxObjects} in its command`,
      );
    }
    const able = targets.filter((t) => t.scenarios.includes(scenario));
    if (able.length === 0) {
      throw new RangeError(
        `Cannot run '${scenario}': no target runs it (${
          targets.map((t) => `${t.name} runs ${t.scenarios.join(", ")}`).join("; ")
        })`,
      );
    }
    for (const size of definition.sized ? options.sizes : [0]) {
      const group = definition.sized ? `${scenario}-${size}` : scenario;
      const cacheMaxObjects = definition.cacheMaxObjects?.(size);
      for (const target of able) {
        const variants = variantsOf.get(target)!;
        const prefix = targets.length > 1 ? `${group} ${target.name}` : group;
        for (const variant of variants) {
          plans.push({
            id: `${prefix} ${variant.name}`,
            group,
            target,
            scenario,
            size,
            variant,
            ...(cacheMaxObjects !== undefined && { cacheMaxObjects }),
          });
        }
      }
    }
  }
  return plans;
}

/** Executes `plans` in order, handing each finished run to `onRun` (to save progress). */
export async function runAll(
  plans: readonly PlannedRun[],
  context: RunnerContext,
  onRun: (run: Run, cluster: ClusterFacts) => Promise<void>,
): Promise<Run[]> {
  const runs: Run[] = [];
  for (const [index, plan] of plans.entries()) {
    if (context.signal.aborted) break;
    context.progress.log(`run ${index + 1}/${plans.length}: ${plan.id}`);
    const { run, cluster } = await runOne(plan, context);
    context.progress.done();
    if (run.error) context.progress.log(`${plan.id} failed: ${run.error}`);
    runs.push(run);
    await onRun(run, cluster);
  }
  return runs;
}

async function runOne(
  plan: PlannedRun,
  context: RunnerContext,
): Promise<{ run: Run; cluster: ClusterFacts }> {
  const { options, progress, signal } = context;
  const { target } = plan;
  const slug = plan.id.replace(/[^a-zA-Z0-9.-]+/g, "_");
  const logDir = join(context.outDir, "logs");
  await Deno.mkdir(logDir, { recursive: true });
  const startedAt = new Date();
  let recorder: RunRecorder | undefined;
  let driven: Driven = { command: [], objects: [] };
  let background: BackgroundTimes | undefined;
  const facts: ClusterFacts = { kubernetes: "unknown", datastore: "unknown" };
  try {
    await using cluster = await provideCluster({
      log: progress.log.bind(progress),
      signal,
      podsPerNode: podsPerNode(plan, options),
      ...(options.kubeconfig !== undefined && { kubeconfig: options.kubeconfig }),
    });
    facts.kubernetes = cluster.kubernetesVersion;
    facts.datastore = cluster.datastore;
    await installCrds(cluster.client, target.crds, { signal });
    const webhook = await configureWebhook(target, cluster.client, signal);
    background = await fill(context, cluster.client);
    // The run's clock starts here, so that its charts begin with the operator, not the cluster.
    recorder = new RunRecorder({
      label: plan.id,
      progress,
      scrapeIntervalMs: options.scrapeIntervalMs,
    });
    try {
      driven = await drive(plan, context, cluster, recorder, join(logDir, slug), webhook?.port);
    } finally {
      if (cluster.shared) await webhook?.remove();
    }
  } catch (e) {
    driven.error ??= describeError(e, signal);
  }
  const record = {
    id: plan.id,
    group: plan.group,
    target: target.name,
    scenario: plan.scenario,
    size: plan.size,
    variant: plan.variant,
    ...(plan.cacheMaxObjects !== undefined && { cacheMaxObjects: plan.cacheMaxObjects }),
    command: driven.command,
    startedAt: (recorder?.startedAt ?? startedAt).toISOString(),
    durationMs: recorder?.now() ?? 0,
    phases: recorder?.phases ?? [],
    samples: recorder?.samples ?? [],
    scrapes: recorder?.scrapes ?? [],
    objects: driven.objects,
    ...(background !== undefined && { background }),
    ...(driven.error !== undefined && { error: driven.error }),
  };
  const window = SCENARIOS[plan.scenario].window;
  return {
    run: { ...record, figures: computeFigures(record, window, driven.marks) },
    cluster: facts,
  };
}

/**
 * For a target that serves a webhook: picks the run's webhook port (one for
 * the run, so that the configurations and every process of it agree) and
 * applies the target's configurations calling it.
 */
async function configureWebhook(
  target: PlannedRun["target"],
  client: BenchCluster["client"],
  signal: AbortSignal,
): Promise<{ port: number; remove(): Promise<void> } | undefined> {
  if (!target.webhookConfigurations) return undefined;
  const port = freePorts(1)[0]!;
  const files = target.webhookConfigurations;
  return { port, remove: await applyWebhookConfigurations(client, files, port, { signal }) };
}

/**
 * Pods a fresh cluster's nodes each take: enough for every object's pods and
 * the background's on either node, so that no run waits on a full node.
 */
export function podsPerNode(plan: Pick<PlannedRun, "size">, options: BenchOptions): number {
  const background = BACKGROUNDS[options.background];
  const pods = plan.size * Math.max(1, options.replicas) +
    (background ? background.deployments * background.replicas : 0);
  return Math.max(110, pods);
}

/** Creates the background `--background` names in the run's cluster, if any, and says so. */
async function fill(
  { options, progress, signal }: RunnerContext,
  client: BenchCluster["client"],
): Promise<BackgroundTimes | undefined> {
  const spec = BACKGROUNDS[options.background];
  if (spec === undefined) return undefined;
  progress.log(`background ${spec.name}: creating its objects at ${spec.ratePerSecond} per second`);
  const times = await fillBackground(client, spec, { timeoutMs: options.readyTimeoutMs, signal });
  progress.log(
    `background ${spec.name}: created in ${(times.createMs / 1000).toFixed(1)} s, ` +
      `its Deployments available ${(times.availableMs / 1000).toFixed(1)} s later`,
  );
  return times;
}

/** What a run's cluster was: the API server's version and its datastore. */
export interface ClusterFacts {
  kubernetes: string;
  /** `etcd` or `kine` for a cluster the harness started; `unknown (--kubeconfig)` otherwise. */
  datastore: string;
}

interface Driven {
  command: string[];
  objects: Run["objects"];
  marks?: ScenarioMarks;
  error?: string;
}

/** Runs the scenario on a ready cluster; always stops the operators and the watch. */
async function drive(
  plan: PlannedRun,
  context: RunnerContext,
  cluster: BenchCluster,
  recorder: RunRecorder,
  logPrefix: string,
  webhookPort: number | undefined,
): Promise<Driven> {
  const { options, progress, signal } = context;
  const { target } = plan;
  const driven: Driven = { command: [], objects: [] };
  const tracker = new ReadinessTracker({
    client: cluster.client,
    resource: target.resource,
    ...objectScope(target, cluster.namespace),
    rule: target.ready,
    now: () => recorder.now(),
    onError: progress.log.bind(progress),
  });
  recorder.detail = () => describeCounts(tracker, plan.size);
  const watch = new AbortController();
  const watching = tracker.run(AbortSignal.any([signal, watch.signal]));
  const launched: OperatorProcess[] = [];
  const scenario: Scenario<ScenarioMarks | undefined> = SCENARIOS[plan.scenario];
  try {
    driven.marks = await scenario.run({
      size: plan.size,
      settings: options,
      recorder,
      tracker,
      workload: {
        client: cluster.client,
        target,
        namespace: cluster.namespace,
        tracker,
        replicas: options.replicas,
        signal,
      },
      signal,
      launch: async ({ candidate } = {}) => {
        const operator = await OperatorProcess.start(target, {
          kubeconfig: cluster.kubeconfig,
          namespace: cluster.namespace,
          logFile: `${logPrefix}.operator${candidate === undefined ? "" : `-${candidate}`}.log`,
          ...(candidate !== undefined && { candidate }),
          v8Flags: plan.variant.v8Flags,
          ...(plan.variant.concurrency !== undefined && { concurrency: plan.variant.concurrency }),
          ...(plan.cacheMaxObjects !== undefined && { cacheMaxObjects: plan.cacheMaxObjects }),
          ...(webhookPort !== undefined && { webhookPort }),
        });
        if (driven.command.length === 0) driven.command = [...operator.argv];
        launched.push(operator);
        recorder.attach(operator);
        return operator;
      },
    });
  } catch (e) {
    driven.error = describeError(e, signal);
    await cluster.saveLogs(logPrefix);
  } finally {
    await recorder.detach();
    await Promise.all(launched.filter((o) => !o.exited).map((o) => o.stop()));
    watch.abort();
    await watching;
    driven.objects = tracker.timings();
    if (cluster.shared && !target.resource.namespaced) {
      await removeObjects(cluster.client, target, driven.objects.map((o) => o.name)).catch((e) =>
        progress.log(`could not delete this run's ${target.resource.plural}: ${e}`)
      );
    }
  }
  return driven;
}

function describeError(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return "interrupted";
  return error instanceof Error ? error.message : String(error);
}

function describeCounts(tracker: ReadinessTracker, size: number): string {
  if (size === 0) return "";
  const c = tracker.counts();
  const parts = [`created ${c.created}/${size}`, `ready ${c.ready}`];
  if (c.updated > 0) parts.push(`updated ${c.updateReady}/${c.updated}`);
  if (c.deleted > 0) parts.push(`gone ${c.gone}/${c.deleted}`);
  return parts.join("  ");
}
