/**
 * How many reconciles may run at once, read from how long the requests of
 * reconciles take. When the API server is the bottleneck (on a small node it
 * shares two cores with etcd, the controller manager and the operator), more
 * reconciles at once do no more a second: each request only waits longer in
 * the server's queue, and so does a user's fresh change behind them.
 *
 * The rule is TCP Vegas' (and Netflix's concurrency limits'), counted in
 * requests. Each request is set against the fastest of its kind (resource
 * and verb) in the last one to two windows (30 s each), what such a request
 * costs the server without a queue. Once `max(4, limit)` requests sent since
 * the limit last moved have ended, the median `r` of their ratios and the
 * mean number `n` of this manager's requests in flight as each ended tell
 * how many of them wait in the server's queue: `n × (1 − 1/r)`. Under a
 * half, the limit grows by one (up to `max`), if reconciles waited for a
 * permit meanwhile (a limit nobody reaches earns nothing); over one, it
 * shrinks to what keeps about one waiting, `limit / r + limit / n` (by one
 * at least, never under one); between, it stays. So a server that answers
 * as fast under load (a remote one, behind a network's latency) gets every
 * permit, and a saturated one has at most about one request of this
 * manager's waiting. Answers that scatter widely however few are sent read
 * as a queue too: the pace then stays lower than the server needs.
 *
 * The limit starts at `initial` (1) and starts there again at a tick after
 * a window without a request or a reconcile waiting, when what the server
 * costs unloaded is forgotten: a burst after a quiet spell must not meet a
 * limit it has not earned.
 * Reconciles that send no request (a restart's backlog whose children are in
 * place) leave it as it is; but while reconciles wait for a permit and those
 * running have sent no request for a whole {@link RequestPace.tick} (they
 * wait on something else: another service, a timer), nothing says the API
 * server is loaded, and each such tick grows the limit by one.
 *
 * @example
 * ```ts
 * import { RequestPace } from "./_request_pace.ts";
 * import { FakeClock } from "../../async/clock.ts";
 * const clock = new FakeClock();
 * const pace = new RequestPace({ max: 8, clock, busy: () => true });
 * for (let i = 0; i < 8; i++) {
 *   const end = pace.begin("configmaps apply");
 *   await clock.advance(5);
 *   end();
 * }
 * pace.limit; // 3: requests one at a time, as fast as ever, grew it from 1, a step a time
 * ```
 *
 * @module
 */
import type { Clock } from "../../async/clock.ts";

/** Options of {@link RequestPace}. */
export interface RequestPaceOptions {
  /** The most reconciles at once. */
  max: number;
  clock: Clock;
  /** Whether reconciles wait for a permit now; the limit grows only then. */
  busy: () => boolean;
  /** The limit at the start and after a quiet spell. Defaults to 1. */
  initial?: number;
  /** How long the fastest request of a kind is remembered: one to two of these. Defaults to 30 000 ms. */
  windowMs?: number;
  /** Told each new limit. */
  onChange?: (limit: number) => void;
}

/** Requests of the manager's waiting in the server's queue under which the limit grows, */
const GROW_UNDER = 0.5;
/** and over which it shrinks. */
const SHRINK_OVER = 1;

/** The fastest request of one kind, in the window under way and the one before. */
interface Kind {
  now: number;
  before: number;
  windowStart: number;
}

/** See the module documentation. */
export class RequestPace {
  readonly #max: number;
  readonly #initial: number;
  readonly #clock: Clock;
  readonly #busy: () => boolean;
  readonly #windowMs: number;
  readonly #onChange: ((limit: number) => void) | undefined;
  #limit: number;
  readonly #kinds = new Map<string, Kind>();
  #inFlight = 0;
  #lastRequest = -Infinity;
  /** Ratios to the fastest of their kind of the requests ended since the last step. */
  #ratios: number[] = [];
  /** The sum of the requests in flight as each of those ended. */
  #inFlightSum = 0;
  /** Whether reconciles waited for a permit since the last step. */
  #waited = false;
  /** When the limit last moved. */
  #movedAt = -Infinity;
  /** Whether a request ended since the last tick. */
  #endedSinceTick = false;

  /** @throws {RangeError} when `max` or `initial` is not a positive integer. */
  constructor(options: RequestPaceOptions) {
    const { max, initial = 1 } = options;
    for (const [name, value] of [["max", max], ["initial", initial]] as const) {
      if (!Number.isSafeInteger(value) || value < 1) {
        throw new RangeError(`'${name}' must be a positive integer, got ${value}`);
      }
    }
    this.#max = max;
    this.#initial = Math.min(initial, max);
    this.#limit = this.#initial;
    this.#clock = options.clock;
    this.#busy = options.busy;
    this.#windowMs = options.windowMs ?? 30_000;
    this.#onChange = options.onChange;
  }

  /** Reconciles that may run at once now. */
  get limit(): number {
    return this.#limit;
  }

  /**
   * A request of kind `kind` (e.g. `deployments apply`) starts; call what
   * this returns once when it ends, answered or failed.
   */
  begin(kind: string): () => void {
    const started = this.#clock.now();
    this.#inFlight++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#ended(kind, started);
      this.#inFlight--;
    };
  }

  /**
   * Milliseconds until a {@link RequestPace.tick} would start the limit over
   * if nobody waits meanwhile; `undefined` when there is nothing to start
   * over.
   */
  quietIn(): number | undefined {
    if (this.#limit === this.#initial && this.#kinds.size === 0) return undefined;
    if (this.#inFlight > 0) return this.#windowMs;
    return Math.max(0, this.#lastRequest + this.#windowMs - this.#clock.now());
  }

  /**
   * Call about once a second while reconciles wait, and when
   * {@link RequestPace.quietIn} is due: grows the limit by one when reconciles wait for
   * a permit while no request is in flight and none ended since the last call;
   * starts it over when nobody waits and a window passed without a request.
   */
  tick(): void {
    const busy = this.#busy();
    if (!busy && this.#inFlight === 0 && this.#clock.now() - this.#lastRequest >= this.#windowMs) {
      this.#restart();
    } else if (busy && this.#inFlight === 0 && !this.#endedSinceTick) {
      this.#set(Math.min(this.#max, this.#limit + 1));
    }
    this.#endedSinceTick = false;
  }

  #ended(name: string, started: number): void {
    this.#endedSinceTick = true;
    const now = this.#clock.now();
    const ms = now - started;
    this.#lastRequest = now;
    let kind = this.#kinds.get(name);
    if (!kind) {
      kind = { now: ms, before: Infinity, windowStart: now };
      this.#kinds.set(name, kind);
    }
    if (now - kind.windowStart >= this.#windowMs) {
      kind.before = now - kind.windowStart >= 2 * this.#windowMs ? Infinity : kind.now;
      kind.now = ms;
      kind.windowStart = now;
    }
    kind.now = Math.min(kind.now, ms);
    // A request sent before the limit last moved tells of the old limit.
    if (started < this.#movedAt) return;
    this.#ratios.push(ms / Math.max(1, Math.min(kind.now, kind.before)));
    this.#inFlightSum += this.#inFlight;
    this.#waited ||= this.#busy();
    if (this.#ratios.length >= Math.max(4, this.#limit)) this.#step();
  }

  #step(): void {
    const ratio = median(this.#ratios);
    const inFlight = this.#inFlightSum / this.#ratios.length;
    const waited = this.#waited;
    this.#ratios = [];
    this.#inFlightSum = 0;
    this.#waited = false;
    const queued = inFlight * (1 - 1 / ratio);
    if (queued < GROW_UNDER) {
      if (waited) this.#set(Math.min(this.#max, this.#limit + 1));
    } else if (queued > SHRINK_OVER) {
      const keeps = Math.floor(this.#limit / ratio + this.#limit / inFlight);
      this.#set(Math.max(1, Math.min(this.#limit - 1, keeps)));
    }
  }

  /** Forgets what requests cost and starts the limit over. */
  #restart(): void {
    this.#kinds.clear();
    this.#ratios = [];
    this.#inFlightSum = 0;
    this.#waited = false;
    this.#set(this.#initial);
  }

  #set(limit: number): void {
    if (limit === this.#limit) return;
    this.#limit = limit;
    this.#movedAt = this.#clock.now();
    this.#onChange?.(limit);
  }
}

function median(values: number[]): number {
  values.sort((a, b) => a - b);
  const mid = values.length >> 1;
  return values.length % 2 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
}
