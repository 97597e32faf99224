/**
 * Leader election on a `coordination.k8s.io/v1` Lease, with client-go's
 * semantics and defaults.
 *
 * - A candidate takes the Lease when it is absent, already ours, released
 *   (no holder), or expired. Expiry is judged by our own clock: a Lease is
 *   expired when its record has not changed for `leaseDurationSeconds` since
 *   *we* last saw it change. The holder's timestamps are never compared with
 *   our clock, so clock skew between nodes cannot cause two leaders.
 * - Every write is a replace carrying the resourceVersion we read, so two
 *   candidates racing for the Lease cannot both win: the loser gets a 409.
 * - The leader renews every `retryPeriodMs`. If no renewal succeeds within
 *   `renewDeadlineMs` of the last one (a hung request counts as a failure)
 *   it stops leading, aborting the signal given to `onStartedLeading`,
 *   before any other candidate can see the Lease as expired. It also stops at
 *   once when it sees another holder. Losing the Lease is a warning that
 *   says why, with the last renewal's error: a 401 or 403 there usually
 *   means the credentials were revoked or lost their rights on Leases.
 * - A candidate tries again every `retryPeriodMs` (jittered), and right
 *   at the holder's expiry when that comes sooner. Where the {@link LeaseApi}
 *   can watch, a candidate follows the Lease, so it sees each renewal as it
 *   happens and the expiry it judges is the real one: a dead leader's
 *   successor takes over at most `leaseDurationSeconds` after the last
 *   renewal, not up to two retry periods later.
 * - On a clean shutdown the leader releases the Lease (no holder, a one
 *   second duration), so a standby watching it takes over at once, one
 *   that only reads at its next retry.
 *
 * @example
 * ```ts
 * import { type Lease, LeaderElector } from "./leader.ts";
 * // Usually `leaseApi(client)`; here, a Lease kept in memory.
 * let stored: Lease | undefined;
 * const api = {
 *   get: () => Promise.resolve(stored),
 *   create: (lease: Lease) => Promise.resolve(stored = { ...lease, metadata: { ...lease.metadata, resourceVersion: "1" } }),
 *   replace: (lease: Lease) => Promise.resolve(stored = lease),
 * };
 * const elector = new LeaderElector(api, { namespace: "kube-system", name: "kinglet", identity: "node-a" });
 * const shutdown = new AbortController();
 * await elector.run(shutdown.signal, {
 *   onStartedLeading: (leading) => {
 *     // Start the controllers here, and stop them when `leading` aborts.
 *     shutdown.abort();
 *   },
 * });
 * stored?.spec?.holderIdentity; // "": released on the way out
 * ```
 *
 * @module
 */
import {
  describeError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isUnauthorized,
} from "../../kube/errors.ts";
import { logger } from "../../log.ts";
import { type Clock, systemClock } from "../../async/clock.ts";
import type { Lease, LeaseApi } from "./_lease_api.ts";
import { microTime } from "../../kube/micro_time.ts";

export { type Lease, type LeaseApi, leaseApi, type LeaseClient } from "./_lease_api.ts";

const log = logger("leader");

/** Options of {@link LeaderElector}. */
export interface LeaderElectorOptions {
  /** Namespace of the Lease. */
  namespace: string;
  /** Name of the Lease. */
  name: string;
  /** Who we are, unique among the candidates, e.g. the hostname plus a random suffix. */
  identity: string;
  /** How long a Lease stays ours without renewal, in whole seconds. @default 15_000 */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it stops leading. @default 10_000 */
  renewDeadlineMs?: number;
  /** Time between attempts to acquire or renew. @default 2_000 */
  retryPeriodMs?: number;
  /** Release the Lease when `run`'s signal aborts while leading. @default true */
  releaseOnCancel?: boolean;
  /** Timestamps written to the Lease are `clock.now()` as Unix milliseconds. @default systemClock */
  clock?: Clock;
  /** Spreads the retries of candidates; in [0, 1). @default Math.random */
  random?: () => number;
}

/** What {@link LeaderElector.run} calls as leadership comes and goes. */
export interface LeaderCallbacks {
  /**
   * We became the leader. Start working; stop when `leading` aborts. Not
   * awaited: it may run for as long as we lead.
   */
  onStartedLeading(leading: AbortSignal): void | Promise<void>;
  /**
   * We stopped leading, because `run`'s signal aborted or renewal failed.
   * Awaited before the Lease is released, so in-flight work can drain; keep
   * it shorter than the lease duration.
   */
  onStoppedLeading?(): void | Promise<void>;
  /** The Lease has a new holder, possibly us. */
  onNewLeader?(identity: string): void;
}

/** client-go's `JitterFactor`: acquire retries wait `retryPeriod * (1 + 1.2 * random)`. */
const JITTER_FACTOR = 1.2;

/** How long after a Lease's observed expiry a candidate tries: past it, never on it. */
const EXPIRY_MARGIN_MS = 10;

/** The one outcome of leading that is not a loss: `run`'s signal aborted. */
const SHUTTING_DOWN = "shutting down";

type Spec = NonNullable<Lease["spec"]>;

/**
 * Campaigns for one Lease and leads while it holds it; see the module
 * documentation for the guarantees.
 */
export class LeaderElector {
  readonly #api: LeaseApi;
  readonly #namespace: string;
  readonly #name: string;
  readonly #identity: string;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #releaseOnCancel: boolean;
  readonly #clock: Clock;
  readonly #random: () => number;
  /** The Lease as last read or written; its resourceVersion guards the next write. */
  #observed: Lease | undefined;
  /** The record of `#observed`, serialised, to tell when the holder renewed. */
  #observedRecord = "";
  /** `clock.now()` when the record last changed as far as we saw: the start of its expiry. */
  #observedAt = 0;
  /** Start of our last successful write: the Lease is ours until this plus the lease duration. */
  #renewedAt = 0;
  #reportedLeader: string | undefined;
  /** Why the last acquire or renewal failed, until one succeeds: the reason a loss reports. */
  #lastFailure: string | undefined;
  #leading: AbortController | undefined;
  #running = false;
  /** Ends a candidate's wait early: the Lease was released or deleted. */
  #wake: AbortController | undefined;

  /**
   * Creates a candidate; nothing happens before {@link LeaderElector.run}.
   *
   * @throws {RangeError} when a name is empty or the durations are out of order.
   */
  constructor(api: LeaseApi, options: LeaderElectorOptions) {
    this.#api = api;
    this.#namespace = options.namespace;
    this.#name = options.name;
    this.#identity = options.identity;
    this.#leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.#retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.#releaseOnCancel = options.releaseOnCancel ?? true;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    const fail = (what: string) => {
      throw new RangeError(`Cannot create the leader elector: ${what}`);
    };
    for (const key of ["namespace", "name", "identity"] as const) {
      if (!options[key]) fail(`'${key}' must not be empty, got ${JSON.stringify(options[key])}`);
    }
    if (!(this.#retryPeriodMs > 0)) {
      fail(`'retryPeriodMs' must be positive, got ${this.#retryPeriodMs}`);
    }
    if (!(this.#renewDeadlineMs > JITTER_FACTOR * this.#retryPeriodMs)) {
      fail(
        `'renewDeadlineMs' must be greater than ${JITTER_FACTOR} × 'retryPeriodMs', ` +
          `got ${this.#renewDeadlineMs} and ${this.#retryPeriodMs}`,
      );
    }
    if (!(this.#leaseDurationMs > this.#renewDeadlineMs) || this.#leaseDurationMs % 1000 !== 0) {
      fail(
        `'leaseDurationMs' must be whole seconds greater than 'renewDeadlineMs', ` +
          `got ${this.#leaseDurationMs} and ${this.#renewDeadlineMs}`,
      );
    }
  }

  /** Whether we lead right now. */
  get isLeader(): boolean {
    return this.#leading !== undefined && !this.#leading.signal.aborted;
  }

  /** The holder of the Lease as last observed, if any. */
  get leader(): string | undefined {
    return this.#observed?.spec?.holderIdentity || undefined;
  }

  /**
   * Campaigns until we lead, then leads until `signal` aborts or renewal
   * fails; resolves when leadership is over (to campaign again, call `run`
   * again). Never throws for API errors: they are logged and retried.
   *
   * @throws {TypeError} when this elector is already running.
   */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<void> {
    if (this.#running) {
      throw new TypeError(`Cannot run the election for ${this.#lease()}: it is already running`);
    }
    this.#running = true;
    try {
      if (!(await this.#acquire(signal, callbacks))) return;
      const leading = new AbortController();
      this.#leading = leading;
      log.info("{identity} is now the leader of {lease}", {
        identity: this.#identity,
        lease: this.#lease(),
      });
      Promise.resolve()
        .then(() => callbacks.onStartedLeading(leading.signal))
        .catch((error) =>
          log.error("onStartedLeading failed: {error}", { error: describeError(error) })
        );
      const outcome = await this.#renew(signal, callbacks);
      leading.abort(new Error(`leadership of ${this.#lease()} ended: ${outcome}`));
      if (outcome === SHUTTING_DOWN) {
        log.info("{identity} stopped leading {lease}: {outcome}", {
          identity: this.#identity,
          lease: this.#lease(),
          outcome,
        });
      } else {
        log.warn("{identity} lost {lease} and stops the work it led: {reason}", {
          identity: this.#identity,
          lease: this.#lease(),
          reason: outcome,
        });
      }
      try {
        await callbacks.onStoppedLeading?.();
      } catch (error) {
        log.error("onStoppedLeading failed: {error}", { error: describeError(error) });
      }
      if (outcome === SHUTTING_DOWN && this.#releaseOnCancel) await this.release();
    } finally {
      this.#leading = undefined;
      this.#running = false;
    }
  }

  /**
   * Gives the Lease up if we hold it: clears the holder and sets a one second
   * duration so that a standby takes over at once. Resolves to whether it
   * did. Never throws for API errors.
   *
   * @throws {TypeError} while leading: abort `run`'s signal instead, which
   * stops leading first and then releases.
   */
  async release(signal?: AbortSignal): Promise<boolean> {
    if (this.isLeader) {
      throw new TypeError(
        `Cannot release ${this.#lease()} while leading: abort the signal given to run() instead`,
      );
    }
    const observed = this.#observed;
    if (!observed || observed.spec?.holderIdentity !== this.#identity) return false;
    const now = microTime(this.#clock.now());
    const released = (lease: Lease): Lease => ({
      ...lease,
      spec: {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: lease.spec?.leaseTransitions ?? 0,
      } satisfies Spec,
    });
    const deadline = this.#clock.now() + this.#renewDeadlineMs;
    return await this.#bounded(deadline, signal, async (bounded) => {
      try {
        try {
          this.#observe(await this.#api.replace(released(observed), bounded));
        } catch (error) {
          // A renewal cut short by the shutdown may have landed after all, moving the
          // resourceVersion: read the Lease again and release it if it is still ours.
          if (!isConflict(error)) throw error;
          const current = await this.#api.get(this.#namespace, this.#name, bounded);
          if (current?.spec?.holderIdentity !== this.#identity) return false;
          this.#observe(await this.#api.replace(released(current), bounded));
        }
        log.info("{identity} released {lease}", { identity: this.#identity, lease: this.#lease() });
        return true;
      } catch (error) {
        log.warn("Could not release {lease}: {error}", {
          lease: this.#lease(),
          error: describeError(error),
        });
        return false;
      }
    });
  }

  /** Resolves to true once we hold the Lease, false if `signal` aborted first. */
  async #acquire(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<boolean> {
    const campaign = new AbortController();
    const watching = this.#watchLease(AbortSignal.any([signal, campaign.signal]));
    try {
      for (;;) {
        const deadline = this.#clock.now() + this.#renewDeadlineMs;
        const acquired = await this.#bounded(deadline, signal, (s) => this.#tryAcquireOrRenew(s));
        this.#reportLeader(callbacks);
        if (acquired) return true;
        const wake = new AbortController();
        this.#wake = wake;
        await this.#sleep(this.#nextTry(), AbortSignal.any([signal, wake.signal]));
        this.#wake = undefined;
        if (signal.aborted) return false;
      }
    } finally {
      campaign.abort();
      await watching;
    }
  }

  /**
   * How long a candidate waits before its next try: a jittered retry
   * period, cut short to the moment the holder's Lease expires as we
   * observed it, so that a dead leader is replaced at its expiry and not up
   * to a retry period later.
   */
  #nextTry(): number {
    const retry = this.#retryPeriodMs * (1 + JITTER_FACTOR * this.#random());
    const ttl = (this.#observed?.spec?.leaseDurationSeconds ?? 0) * 1000;
    const expiresIn = this.#observedAt + ttl - this.#clock.now();
    return expiresIn > 0 ? Math.min(retry, expiresIn + EXPIRY_MARGIN_MS) : retry;
  }

  /**
   * Follows the Lease while we campaign, where the API offers a watch (see
   * the module documentation); a release or deletion wakes the campaign at
   * once. Without the watch (or the right to it) the reads alone time the
   * renewals.
   */
  async #watchLease(signal: AbortSignal): Promise<void> {
    const api = this.#api;
    if (!api.changes) return;
    while (!signal.aborted) {
      const from = this.#observed?.metadata?.resourceVersion;
      if (from) {
        try {
          for await (const lease of api.changes(this.#namespace, this.#name, from, signal)) {
            if (lease) this.#observe(lease);
            if (!lease?.spec?.holderIdentity) this.#wake?.abort();
          }
        } catch (error) {
          if (signal.aborted) return;
          if (isForbidden(error)) {
            log.info(
              "Cannot watch {lease} ({error}); renewals are timed by reads alone: grant 'watch' " +
                "on the Lease for takeovers at its expiry",
              { lease: this.#lease(), error: describeError(error) },
            );
            return;
          }
          log.debug("The watch of {lease} failed: {error}", {
            lease: this.#lease(),
            error: describeError(error),
          });
        }
      }
      if (!(await this.#sleep(this.#retryPeriodMs, signal))) return;
    }
  }

  /**
   * Renews until `signal` aborts ({@link SHUTTING_DOWN}) or leadership is
   * lost; resolves to why it ended.
   */
  async #renew(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<string> {
    let wait = this.#retryPeriodMs;
    for (;;) {
      if (!(await this.#sleep(wait, signal))) return SHUTTING_DOWN;
      const deadline = this.#renewedAt + this.#renewDeadlineMs;
      if (this.#clock.now() >= deadline) {
        return `no renewal succeeded within ${this.#renewDeadlineMs} ms; the last failure: ${
          this.#lastFailure ?? "no answer before the deadline"
        }`;
      }
      const renewed = await this.#bounded(deadline, signal, (s) => this.#tryAcquireOrRenew(s));
      this.#reportLeader(callbacks);
      if (signal.aborted) return SHUTTING_DOWN;
      if (this.leader !== undefined && this.leader !== this.#identity) {
        return `the Lease is now held by ${this.leader}`;
      }
      wait = renewed
        ? this.#retryPeriodMs
        : Math.max(0, Math.min(this.#retryPeriodMs, deadline - this.#clock.now()));
    }
  }

  /** One read and at most one write: client-go's `tryAcquireOrRenew`. */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const startedAt = this.#clock.now();
    const now = microTime(startedAt);
    const durationSeconds = this.#leaseDurationMs / 1000;
    const ours: Spec = {
      holderIdentity: this.#identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    };
    try {
      const current = await this.#api.get(this.#namespace, this.#name, signal);
      if (!current) {
        const lease: Lease = {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { namespace: this.#namespace, name: this.#name },
          spec: ours,
        };
        this.#observe(await this.#api.create(lease, signal));
        this.#renewedAt = startedAt;
        this.#lastFailure = undefined;
        return true;
      }
      this.#observe(current);
      const spec = current.spec ?? {};
      const holder = spec.holderIdentity ?? "";
      const ttl = (spec.leaseDurationSeconds ?? 0) * 1000;
      if (holder && holder !== this.#identity && this.#observedAt + ttl > this.#clock.now()) {
        return false;
      }
      if (holder === this.#identity) {
        ours.acquireTime = spec.acquireTime ?? now;
        ours.leaseTransitions = spec.leaseTransitions ?? 0;
      } else {
        ours.leaseTransitions = (spec.leaseTransitions ?? 0) + 1;
      }
      this.#observe(await this.#api.replace({ ...current, spec: ours }, signal));
      this.#renewedAt = startedAt;
      this.#lastFailure = undefined;
      return true;
    } catch (error) {
      if (signal.aborted) return false;
      this.#lastFailure = failureReason(error);
      const lostRace = isConflict(error) || isAlreadyExists(error);
      log[lostRace ? "debug" : "warn"]("Could not acquire or renew {lease}: {error}", {
        lease: this.#lease(),
        error: this.#lastFailure,
      });
      return false;
    }
  }

  #observe(lease: Lease): void {
    const spec = lease.spec ?? {};
    const record = JSON.stringify([
      spec.holderIdentity ?? "",
      spec.leaseDurationSeconds,
      spec.acquireTime,
      spec.renewTime,
      spec.leaseTransitions,
    ]);
    if (record !== this.#observedRecord) {
      this.#observedRecord = record;
      this.#observedAt = this.#clock.now();
    }
    this.#observed = lease;
  }

  #reportLeader(callbacks: LeaderCallbacks): void {
    const leader = this.leader;
    if (leader === undefined || leader === this.#reportedLeader) return;
    this.#reportedLeader = leader;
    if (leader !== this.#identity) {
      log.info("{lease} is held by {leader}", { lease: this.#lease(), leader });
    }
    try {
      callbacks.onNewLeader?.(leader);
    } catch (error) {
      log.error("onNewLeader failed: {error}", { error: describeError(error) });
    }
  }

  /**
   * Runs `attempt` with a signal that aborts at `deadline`, and gives up on it
   * then even if it ignores the signal: a hung request must not keep a
   * leader leading past its renew deadline.
   */
  async #bounded(
    deadline: number,
    signal: AbortSignal | undefined,
    attempt: (signal: AbortSignal) => Promise<boolean>,
  ): Promise<boolean> {
    const expiry = new AbortController();
    const done = new AbortController();
    const bounded = signal ? AbortSignal.any([signal, expiry.signal]) : expiry.signal;
    const expired = this.#clock.sleep(deadline - this.#clock.now(), done.signal).then(() => {
      expiry.abort(new DOMException(`deadline of ${this.#lease()} passed`, "TimeoutError"));
      return false;
    }, () => false);
    try {
      return await Promise.race([attempt(bounded), expired]);
    } finally {
      done.abort();
    }
  }

  /** Sleeps; resolves to false instead if `signal` aborts. */
  async #sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await this.#clock.sleep(ms, signal);
      return true;
    } catch {
      return false;
    }
  }

  #lease(): string {
    return `Lease ${this.#namespace}/${this.#name}`;
  }
}

/**
 * A failed request as the reason a leader lost its Lease. A 401 refuses the
 * credentials and a 403 their rights: neither passes by retrying, so the
 * reason says what to look at.
 */
function failureReason(error: unknown): string {
  const text = describeError(error);
  if (!isUnauthorized(error) && !isForbidden(error)) return text;
  return `${text}; the API server refused these credentials: the token may be revoked or ` +
    "expired, or its RBAC may no longer cover the Lease";
}
