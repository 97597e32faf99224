/**
 * Takes keys off a controller's queue and runs them: each under the
 * manager's semaphore (and the controller's own limit, when it has one),
 * after the reconcile rate limit admits it, with a timeout and an
 * `AbortSignal`; and drains what runs when the controller stops.
 *
 * What the caller must know:
 *
 * - The handler must not throw: it settles its key itself. The runner marks
 *   the key done in the queue once the handler returns.
 * - A controller's own slot is taken before the manager's, so waiting for it
 *   holds none of the slots other controllers need.
 * - {@link Runner.drain} lets running handlers finish for up to its deadline,
 *   then aborts their signals, and resolves once they have all returned.
 *
 * @example
 * ```ts
 * import { Runner } from "./runner.ts";
 * import { Pacing } from "./pacing.ts";
 * import { WorkQueue } from "../queue/queue.ts";
 * import { Semaphore } from "../../async/semaphore.ts";
 * import { FakeClock } from "../../async/clock.ts";
 * const clock = new FakeClock();
 * const queue = new WorkQueue<string>({ clock });
 * const handled = Promise.withResolvers<string>();
 * const runner = new Runner({ name: "test" }, {
 *   queue,
 *   clock,
 *   semaphore: new Semaphore(1),
 *   pacing: new Pacing({}, { name: "test", clock }),
 *   handle: (key) => Promise.resolve(handled.resolve(key)),
 * });
 * queue.add("ns/a");
 * const running = runner.run(new AbortController().signal);
 * if (await handled.promise !== "ns/a") throw new Error("not run");
 * queue.shutDown();
 * await running;
 * await runner.drain(0);
 * ```
 *
 * @module
 */
import type { ObjectKey } from "../../kube/types.ts";
import { type Clock, deadline } from "../../async/clock.ts";
import { Semaphore } from "../../async/semaphore.ts";
import { logger } from "../../log.ts";
import type { ControllerMetrics } from "../metrics/metrics.ts";
import type { WorkQueue } from "../queue/queue.ts";
import type { Pacing } from "./pacing.ts";

/** The controller's options a runner reads; see `ControllerSpec`. */
export interface RunnerOptions {
  /** Names the controller in errors and logs. */
  name: string;
  /** Longest a handler may take before its signal aborts. Defaults to 60 000 ms. */
  reconcileTimeoutMs?: number;
  /** This controller's own limit under the manager's. Defaults to none. */
  maxConcurrentReconciles?: number;
}

/** What a runner works with. */
export interface RunnerDeps {
  /** Where the keys come from. */
  queue: WorkQueue<ObjectKey>;
  /** Times the handlers out. */
  clock: Clock;
  /** The manager's limit across all controllers. */
  semaphore: Semaphore;
  /** Admits each start under the reconcile rate limit. */
  pacing: Pacing;
  /** Reconciles and settles one key; must not throw. */
  handle(key: ObjectKey, signal: AbortSignal): Promise<void>;
  /** Counts the handlers running; defaults to none. */
  metrics?: ControllerMetrics;
}

const DEFAULT_RECONCILE_TIMEOUT_MS = 60_000;

/** Runs a controller's keys; see the module documentation. */
export class Runner {
  readonly #deps: RunnerDeps;
  readonly #timeoutMs: number;
  /** This controller's own share of the manager's semaphore, when it has a limit of its own. */
  readonly #ownSlots: Semaphore | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  /** Aborts every handler still running once the drain deadline passes. */
  readonly #abort = new AbortController();
  readonly #log;

  /**
   * Checks `options`; nothing runs before {@link Runner.run}.
   *
   * @throws {RangeError} when `reconcileTimeoutMs` is not positive or
   * `maxConcurrentReconciles` is not a positive integer.
   */
  constructor(options: RunnerOptions, deps: RunnerDeps) {
    const refuse = (what: string) =>
      new RangeError(`Cannot create controller '${options.name}': ${what}`);
    const timeout = options.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
    if (!(timeout > 0)) throw refuse(`'reconcileTimeoutMs' must be positive, got ${timeout}`);
    const own = options.maxConcurrentReconciles;
    if (own !== undefined && (!Number.isSafeInteger(own) || own < 1)) {
      throw refuse(`'maxConcurrentReconciles' must be a positive integer, got ${own}`);
    }
    this.#deps = deps;
    this.#timeoutMs = timeout;
    this.#ownSlots = own === undefined ? undefined : new Semaphore(own);
    this.#log = logger("controller", options.name);
  }

  /** Handlers running right now. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Starts a handler per key until the queue shuts down or `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { queue, pacing, semaphore } = this.#deps;
    for (;;) {
      try {
        await pacing.admit(signal);
      } catch {
        return;
      }
      const key = await queue.get();
      if (key === undefined) return;
      let own;
      let permit;
      try {
        own = await this.#ownSlots?.acquire(signal);
        permit = await semaphore.acquire(signal);
      } catch {
        own?.release();
        queue.done(key);
        return;
      }
      const task = this.#handle(key).finally(() => {
        permit.release();
        own?.release();
        this.#inFlight.delete(task);
      });
      this.#inFlight.add(task);
    }
  }

  /**
   * Lets running handlers finish for up to `drainMs`, then aborts their
   * signals; resolves once every one has returned.
   */
  async drain(drainMs: number): Promise<void> {
    if (this.#inFlight.size && drainMs > 0) {
      const deadline = new AbortController();
      await Promise.race([
        Promise.allSettled([...this.#inFlight]),
        this.#deps.clock.sleep(drainMs, deadline.signal).catch(() => {}),
      ]);
      deadline.abort();
    }
    if (this.#inFlight.size) {
      this.#log.warn("aborting {count} reconciles still running at shutdown", {
        count: this.#inFlight.size,
      });
    }
    this.#abort.abort(new DOMException("The controller is stopping", "AbortError"));
    await Promise.allSettled([...this.#inFlight]);
  }

  async #handle(key: ObjectKey): Promise<void> {
    const { clock, metrics, queue } = this.#deps;
    using limit = deadline(clock, this.#timeoutMs, this.#abort.signal);
    metrics?.activeWorkers(1);
    try {
      await this.#deps.handle(key, limit.signal);
    } finally {
      metrics?.activeWorkers(-1);
      queue.done(key);
    }
  }
}
