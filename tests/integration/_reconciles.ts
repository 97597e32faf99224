/**
 * Instruments reconcile functions: every call with its key, who ran it, the
 * generation it saw, when it started and ended and how, and any moment two
 * calls held one key at once (across all the controllers sharing the log,
 * so two leaders reconciling one object show up too).
 *
 * @module
 */
import type { KubeObject, ObjectKey } from "../../lib/kube/types.ts";
import type { Action, ReconcileContext } from "../../lib/runtime/controller/spec.ts";

/** One reconcile call. */
export interface ReconcileCall {
  key: ObjectKey;
  /** Which controller or manager ran it. */
  who: string;
  generation: number | undefined;
  resourceVersion: string | undefined;
  /** Whether the object had `metadata.deletionTimestamp`. */
  deleting: boolean;
  /** `Date.now()` at entry. */
  startedAt: number;
  /** `Date.now()` at exit; unset while running. */
  endedAt?: number;
  outcome?: "ok" | "threw";
  /** Whether the reconcile's signal had aborted when it returned. */
  aborted?: boolean;
}

type Reconcile<T extends KubeObject> = (object: T, context: ReconcileContext) => Promise<Action>;

/** A shared record of reconcile calls; see the module documentation. */
export class ReconcileLog {
  readonly calls: ReconcileCall[] = [];
  /** One line per time a key was entered while another call held it. */
  readonly overlaps: string[] = [];
  /** Most calls running at once, over all keys. */
  maxRunning = 0;
  readonly #holders = new Map<ObjectKey, string>();

  /** `body`, recorded as run by `who`. */
  wrap<T extends KubeObject>(who: string, body: Reconcile<T>): Reconcile<T> {
    return async (object, context) => {
      const key = context.key;
      const call: ReconcileCall = {
        key,
        who,
        generation: object.metadata?.generation,
        resourceVersion: object.metadata?.resourceVersion,
        deleting: object.metadata?.deletionTimestamp !== undefined,
        startedAt: Date.now(),
      };
      this.calls.push(call);
      const holder = this.#holders.get(key);
      if (holder !== undefined) {
        this.overlaps.push(`${key}: ${who} entered while ${holder} held it`);
      }
      this.#holders.set(key, who);
      this.maxRunning = Math.max(this.maxRunning, this.running);
      try {
        const action = await body(object, context);
        call.outcome = "ok";
        return action;
      } catch (error) {
        call.outcome = "threw";
        throw error;
      } finally {
        call.endedAt = Date.now();
        call.aborted = context.signal.aborted;
        if (this.#holders.get(key) === who) this.#holders.delete(key);
      }
    };
  }

  /** Resolves once no call has run or started for `quietMs`. */
  async settled(quietMs = 700, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const last = Math.max(0, ...this.calls.map((c) => c.endedAt ?? Infinity));
      if (this.running === 0 && Date.now() - last >= quietMs) return;
      if (Date.now() > deadline) {
        throw new Error(`reconciles did not settle within ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Calls still running. */
  get running(): number {
    return this.calls.filter((c) => c.endedAt === undefined).length;
  }

  /** Calls for `key`, by anyone or by `who`. */
  of(key: ObjectKey, who?: string): ReconcileCall[] {
    return this.calls.filter((c) => c.key === key && (who === undefined || c.who === who));
  }

  /** Number of calls for `key`, by anyone or by `who`. */
  count(key: ObjectKey, who?: string): number {
    return this.of(key, who).length;
  }

  /** Calls by `who`. */
  by(who: string): ReconcileCall[] {
    return this.calls.filter((c) => c.who === who);
  }
}
