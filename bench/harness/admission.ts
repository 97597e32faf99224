/**
 * The admission scenario: what a webhook costs the API server's clients and
 * the operator serving it. The target's webhook configurations were applied
 * before its operator started (bench/harness/runner.ts), calling it at
 * `https://127.0.0.1:{webhookPort}`, and the operator injects its own CA
 * bundle into them; then:
 *
 * - `startup` and `baseline` as in the sized scenarios (the idle RSS of a
 *   serving operator);
 * - `warm-up`: a server-side dry-run create of the target's object every
 *   200 ms until one is admitted, so that the CA bundle is in place and the
 *   API server has connected to the webhook before anything is timed;
 * - `control`, for a namespaced kind: the same requests as `admission`
 *   below, into `kube-system`, which every webhook configuration `deploy`
 *   writes skips (a webhook that is down must not block the system): the API
 *   server's own path for such a request, without the webhook, at the same
 *   rate on the same cluster, so that the webhook's share of the latency
 *   reads as the difference. The webhook's call counter, scraped at the
 *   phase's edges, shows that it was not called;
 * - `admission`: dry-run creates at `--rate` per second for `--admission`,
 *   sent on schedule whatever the earlier ones are doing (an open loop, as
 *   independent clients send), each timed from sending to the answer. A
 *   request that fails (the webhook could not be called, timed out, or
 *   denied) counts as an error and is not retried.
 *
 * A dry run is admitted exactly as a create is (the API server calls every
 * matching webhook, which sees `dryRun: true`) and persists nothing, so the
 * operator's caches and the datastore stay as they were: what the phase
 * measures is the webhook's path alone. Its figures are the client-side
 * latency percentiles, the errors, and the operator's CPU and mean RSS over
 * the phase (`admissionFigures` in measure/figures.ts).
 *
 * @example
 * ```ts
 * import { SCENARIOS } from "./scenarios.ts";
 * SCENARIOS.admission.window; // { from: "admission", to: "admission" }
 * ```
 *
 * @module
 */
import { ADMISSION_PHASE, CONTROL_PHASE } from "../measure/figures.ts";
import type { AdmissionMarks } from "../measure/results.ts";
import { objectScope, renderObject } from "./target.ts";
import { type ScenarioContext, sleep, startup, stop } from "./scenario_steps.ts";

const WARM_UP_POLL_MS = 200;
/** The namespace every webhook configuration `deploy` writes leaves out. */
const SKIPPED_NAMESPACE = "kube-system";

/** Runs the admission scenario; see the module documentation. */
export async function admission(c: ScenarioContext): Promise<AdmissionMarks> {
  const { target } = c.workload;
  if (!target.webhookConfigurations) {
    throw new RangeError(
      `Cannot run admission: the target ${target.name} serves no webhook ('webhookConfigurations')`,
    );
  }
  const operator = await startup(c);
  await c.recorder.phase("baseline", () => sleep(c.settings.baselineMs, c.signal));
  await c.recorder.phase("warm-up", () => firstAdmitted(c));
  const control = target.resource.namespaced
    ? await c.recorder.phase(CONTROL_PHASE, () => sendAdmissions(c, SKIPPED_NAMESPACE))
    : undefined;
  const marks = await c.recorder.phase(
    ADMISSION_PHASE,
    () => sendAdmissions(c, c.workload.namespace),
  );
  await stop(c, operator);
  return {
    ...marks,
    ...(control && {
      control: { latenciesMs: control.latenciesMs, sent: control.sent, errors: control.errors },
    }),
  };
}

/** One dry-run create of the target's object named `admission-<index>` in `namespace`. */
async function admit(c: ScenarioContext, index: number, namespace: string): Promise<void> {
  const { client, target, replicas, signal } = c.workload;
  const name = `admission-${String(index).padStart(5, "0")}`;
  const object = renderObject(target, { name, namespace, index, replicas });
  await client.create(target.resource, object, {
    ...objectScope(target, namespace),
    dryRun: true,
    ...(signal && { signal }),
  });
}

/**
 * Sends a dry-run create every 200 ms until one is admitted.
 *
 * @throws {Error} after `--ready-timeout`, with the last failure.
 */
async function firstAdmitted(c: ScenarioContext): Promise<void> {
  const deadline = c.recorder.now() + c.settings.readyTimeoutMs;
  let last: unknown;
  while (c.recorder.now() < deadline) {
    try {
      return await admit(c, 0, c.workload.namespace);
    } catch (error) {
      c.signal.throwIfAborted();
      last = error;
    }
    await sleep(WARM_UP_POLL_MS, c.signal);
  }
  throw new Error(
    `no admission succeeded within ${c.settings.readyTimeoutMs} ms: ${describe(last)}`,
  );
}

/**
 * Sends `--rate` dry-run creates a second into `namespace` for
 * `--admission`, timing each; never throws for one.
 */
async function sendAdmissions(c: ScenarioContext, namespace: string): Promise<AdmissionMarks> {
  const { ratePerSecond, admissionMs } = c.settings;
  const count = Math.max(1, Math.floor((admissionMs * ratePerSecond) / 1000));
  const started = performance.now();
  const latenciesMs: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const requests: Promise<void>[] = [];
  for (let index = 1; index <= count; index++) {
    const wait = started + ((index - 1) * 1000) / ratePerSecond - performance.now();
    if (wait > 0) await sleep(wait, c.signal);
    const sent = performance.now();
    requests.push(
      admit(c, index, namespace).then(
        () => void latenciesMs.push(performance.now() - sent),
        (error) => {
          errors++;
          firstError ??= describe(error);
        },
      ),
    );
  }
  await Promise.all(requests);
  c.signal.throwIfAborted();
  return {
    ratePerSecond,
    durationMs: performance.now() - started,
    latenciesMs,
    sent: count,
    errors,
    ...(firstError !== undefined && { firstError }),
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message.split("\n")[0]! : String(error);
}
