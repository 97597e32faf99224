/**
 * What a manager runs, as controller-runtime's runnables: the endpoints,
 * the client, the Events, the CRD install, the caches, the memory limit,
 * the heap release and the controllers are each a {@link Runnable}
 * (_runnables.ts lists them in order), and a webhook server would be one
 * more.
 *
 * What the caller must know:
 *
 * - A {@link RunGroup} starts its runnables in order, each once the one
 *   before it has started, and stops them in reverse, each once the one
 *   after it has stopped: the controllers drain before the caches they read
 *   stop, and the endpoints answer until the very end.
 * - A runnable that is `leaderElected` runs only while this process leads:
 *   it starts once the Lease is taken and stops as soon as it is lost. The
 *   others run on every candidate from start to shutdown, started before
 *   the Lease is campaigned for: the endpoints, a warm standby's caches, a
 *   webhook server that the API server calls whoever leads.
 * - A runnable that fails (its start or its run rejects) stops every one,
 *   and the manager's run throws what it failed with. A start that rejects
 *   because its signal aborted is no failure: the manager is stopping.
 *
 * @example
 * ```ts
 * import { aborted, RunGroup, runnable } from "./runnable.ts";
 * const order: string[] = [];
 * const step = (name: string) =>
 *   runnable(name, false, async (signal) => {
 *     order.push(`start ${name}`);
 *     await aborted(signal);
 *     order.push(`stop ${name}`);
 *   });
 * const group = new RunGroup((error) => {
 *   throw error;
 * });
 * await group.start([step("caches"), step("controllers")], new AbortController().signal);
 * await group.stop();
 * order; // ["start caches", "start controllers", "stop controllers", "stop caches"]
 * ```
 *
 * @module
 */

/** A runnable that has started. */
export interface Started {
  /** Settles once it has stopped after its signal aborted; rejects with what made it fail. */
  readonly stopped: Promise<void>;
}

/** One part of what a manager runs; see the module documentation. */
export interface Runnable {
  /** Names it in logs. */
  readonly name: string;
  /** Whether it runs only while this process leads. */
  readonly leaderElected: boolean;
  /**
   * Starts it until `signal` aborts. Resolves once what comes after it may
   * rely on it (a port served, CRDs established); rejects when it cannot
   * start.
   */
  start(signal: AbortSignal): Promise<Started>;
}

/**
 * A runnable named `name` that starts at once and runs `run` until its
 * signal aborts.
 */
export function runnable(
  name: string,
  leaderElected: boolean,
  run: (signal: AbortSignal) => Promise<unknown>,
): Runnable {
  return {
    name,
    leaderElected,
    start: (signal) => Promise.resolve({ stopped: run(signal).then(() => {}) }),
  };
}

/** Runnables started in order and stopped in reverse; see the module documentation. */
export class RunGroup {
  /** What started, in order, each with what stops it. */
  readonly #running: { stop: AbortController; stopped: Promise<void> }[] = [];
  readonly #onFailure: (error: unknown) => void;

  /** `onFailure` hears what a runnable failed with; it should stop the group. */
  constructor(onFailure: (error: unknown) => void) {
    this.#onFailure = onFailure;
  }

  /**
   * Starts `runnables` one after the other, until one fails or `signal`
   * aborts; resolves whether they all started.
   */
  async start(runnables: readonly Runnable[], signal: AbortSignal): Promise<boolean> {
    for (const next of runnables) {
      if (signal.aborted) return false;
      const stop = new AbortController();
      // Only a start is cut short by `signal`; what started stops in reverse, in stop().
      const interrupt = () => stop.abort(signal.reason);
      signal.addEventListener("abort", interrupt, { once: true });
      try {
        const { stopped } = await next.start(stop.signal);
        this.#running.push({ stop, stopped: stopped.catch(this.#onFailure) });
      } catch (error) {
        if (!signal.aborted) this.#onFailure(error);
        return false;
      } finally {
        signal.removeEventListener("abort", interrupt);
      }
    }
    return !signal.aborted;
  }

  /** Stops what started, the last first, each once the one after it has stopped. */
  async stop(): Promise<void> {
    for (const { stop, stopped } of this.#running.splice(0).reverse()) {
      stop.abort();
      await stopped;
    }
  }
}

/**
 * The first failure among run groups: reporting one aborts
 * {@link FirstFailure.signal}, which should stop them all.
 */
export class FirstFailure {
  readonly #failed = new AbortController();
  #first: { error: unknown } | undefined;

  /** Aborts once a failure is reported. */
  get signal(): AbortSignal {
    return this.#failed.signal;
  }

  /** Keeps `error` unless another came first, and aborts the signal. */
  readonly report = (error: unknown): void => {
    this.#first ??= { error };
    this.#failed.abort();
  };

  /** Throws the first failure reported, if there was one. */
  rethrow(): void {
    if (this.#first) throw this.#first.error;
  }
}

/** Resolves once `signal` aborts; at once when it has. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
