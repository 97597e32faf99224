/**
 * Installing and uninstalling an operator's own CRDs: {@link installCrds}
 * applies them (server-side apply) and waits until the API server serves
 * each one, {@link uninstallCrds} deletes them and waits until they are gone.
 * Neither loads zod: an operator may install its CRDs at start-up from CRD
 * objects written out at build time (e.g. by `defineKind` of `./crd`).
 *
 * What the caller must know:
 *
 * - A CRD is usable once its `Established` condition is `True`; before that
 *   a watch or a create of its kind fails with 404. A CRD whose names clash
 *   with another's never gets there: the timeout error lists its conditions,
 *   which say why (`NamesAccepted=False`).
 * - Deleting a CRD deletes every object of its kind. An object with a
 *   finalizer stays until the operator that set the finalizer removes it, so
 *   the CRD stays too: run the operator until they are gone, or the wait
 *   ends in a {@link CrdWaitError}.
 *
 * @example Install at start-up, with a fake client that establishes at once
 * ```ts
 * import { installCrds } from "./install.ts";
 * import type { KubeObject } from "../../kube/mod.ts";
 * const crd = {
 *   apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
 *   metadata: { name: "backups.example.com" },
 * };
 * const client = {
 *   apply: <T extends KubeObject>(_: unknown, object: T) => Promise.resolve(object),
 *   get: <T extends KubeObject>() =>
 *     Promise.resolve({ ...crd, status: { conditions: [{ type: "Established", status: "True" }] } } as unknown as T),
 * };
 * await installCrds(client, [crd], { fieldManager: "backup-operator" }); // ["backups.example.com"]
 * ```
 *
 * @module
 */
import { type Clock, systemClock } from "../../async/clock.ts";
import type { KubeClient } from "../../kube/client.ts";
import { isNotFound } from "../../kube/errors.ts";
import { CUSTOM_RESOURCE_DEFINITIONS } from "../../kube/resources.ts";
import type { KubeObject } from "../../kube/types.ts";

/** Options of {@link installCrds}. */
export interface InstallCrdsOptions {
  /** The field manager of the apply, usually the operator's name. */
  fieldManager: string;
  /** How long to wait for every CRD to be Established. Defaults to 60 000 ms. */
  timeoutMs?: number;
  /** Defaults to the system clock. */
  clock?: Clock;
  /** Aborts the requests and the wait. */
  signal?: AbortSignal;
}

/** Options of {@link uninstallCrds}. */
export interface UninstallCrdsOptions {
  /** How long to wait for every CRD to be gone. Defaults to 60 000 ms. */
  timeoutMs?: number;
  /** Defaults to the system clock. */
  clock?: Clock;
  /** Aborts the requests and the wait. */
  signal?: AbortSignal;
}

/** A CRD did not reach the state waited for in time; the message says which and why. */
export class CrdWaitError extends Error {
  /** Always `CrdWaitError`. */
  override readonly name = "CrdWaitError";
  /** The CRD's name, e.g. `backups.example.com`. */
  readonly crd: string;
  /** Its conditions when the wait ended. */
  readonly conditions: readonly CrdCondition[];

  /** An error about `crd`, whose conditions were `conditions`. */
  constructor(message: string, crd: string, conditions: readonly CrdCondition[]) {
    super(message);
    this.crd = crd;
    this.conditions = conditions;
  }
}

/** One of a CRD's `status.conditions`. */
export interface CrdCondition {
  /** `Established`, `NamesAccepted`, `Terminating`, ... */
  type: string;
  /** `True`, `False` or `Unknown`. */
  status: string;
  /** Why, in CamelCase. */
  reason?: string;
  /** Why, in words. */
  message?: string;
}

/** How often the wait reads a CRD. */
const POLL_MS = 250;
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Applies `crds` with server-side apply (forcing ownership of their fields)
 * and waits until the API server reports each one `Established`; resolves
 * to their names.
 *
 * @throws {TypeError} when `fieldManager` is empty or an object is not a
 * named CustomResourceDefinition.
 * @throws {RangeError} when `timeoutMs` is not a positive number.
 * @throws {CrdWaitError} naming the CRD and its conditions when one is not
 * Established within `timeoutMs`.
 */
export async function installCrds(
  client: Pick<KubeClient, "apply" | "get">,
  crds: readonly KubeObject[],
  options: InstallCrdsOptions,
): Promise<string[]> {
  const { fieldManager, signal } = options;
  if (typeof fieldManager !== "string" || fieldManager === "") {
    throw new TypeError(
      `Cannot install CRDs: 'fieldManager' must be a non-empty string, got ${
        JSON.stringify(fieldManager)
      }`,
    );
  }
  const names = crds.map((crd, i) => crdName("install", crd, i));
  const wait = waiting("install", options);
  for (const crd of crds) {
    await client.apply(CUSTOM_RESOURCE_DEFINITIONS, crd, {
      fieldManager,
      force: true,
      ...(signal && { signal }),
    });
  }
  for (const name of names) {
    for (;;) {
      const crd = await client.get(CUSTOM_RESOURCE_DEFINITIONS, name, {
        ...(signal && { signal }),
      });
      const conditions = conditionsOf(crd);
      if (conditions.some((c) => c.type === "Established" && c.status === "True")) break;
      await wait.next(() =>
        new CrdWaitError(
          `CRD ${name} is not Established after ${wait.seconds}s; conditions: ` +
            `${describe(conditions)}. Check the API server log.`,
          name,
          conditions,
        )
      );
    }
  }
  return names;
}

/**
 * Deletes `crds` (objects or names) and waits until each is gone; resolves to
 * the names of those that were there. Every object of their kinds goes with
 * them.
 *
 * @throws {TypeError} when an object has no `metadata.name`.
 * @throws {RangeError} when `timeoutMs` is not a positive number.
 * @throws {CrdWaitError} when a CRD is still there after `timeoutMs`, saying
 * why: usually objects whose finalizers only a running operator removes.
 */
export async function uninstallCrds(
  client: Pick<KubeClient, "delete" | "get">,
  crds: readonly (KubeObject | string)[],
  options: UninstallCrdsOptions = {},
): Promise<string[]> {
  const at = options.signal ? { signal: options.signal } : {};
  const names = crds.map((crd, i) => typeof crd === "string" ? crd : crdName("uninstall", crd, i));
  const wait = waiting("uninstall", options);
  const deleted: string[] = [];
  for (const name of names) {
    try {
      await client.delete(CUSTOM_RESOURCE_DEFINITIONS, name, at);
      deleted.push(name);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  for (const name of deleted) {
    for (;;) {
      let crd: KubeObject;
      try {
        crd = await client.get(CUSTOM_RESOURCE_DEFINITIONS, name, at);
      } catch (error) {
        if (isNotFound(error)) break;
        throw error;
      }
      const kind = (crd.spec as { names?: { kind?: string } } | undefined)?.names?.kind;
      const conditions = conditionsOf(crd);
      await wait.next(() =>
        new CrdWaitError(
          `CRD ${name} is still terminating after ${wait.seconds}s: its ` +
            `${kind ?? "object"}s wait for their finalizers, which the operator that set them ` +
            `removes once it has cleaned up; run it until they are gone (conditions: ` +
            `${describe(conditions)})`,
          name,
          conditions,
        )
      );
    }
  }
  return deleted;
}

/** One deadline for a whole wait, and the sleep between two reads. */
function waiting(
  verb: string,
  options: { timeoutMs?: number; clock?: Clock; signal?: AbortSignal },
) {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) {
    throw new RangeError(
      `Cannot ${verb} CRDs: 'timeoutMs' must be a positive number, got ${timeoutMs}`,
    );
  }
  const clock = options.clock ?? systemClock;
  const deadline = clock.now() + timeoutMs;
  return {
    seconds: timeoutMs / 1000,
    /** Sleeps before the next read, or throws the error once the deadline has passed. */
    async next(error: () => CrdWaitError): Promise<void> {
      if (clock.now() >= deadline) throw error();
      await clock.sleep(Math.min(POLL_MS, deadline - clock.now()), options.signal);
    },
  };
}

function crdName(verb: string, crd: KubeObject, i: number): string {
  const name = crd?.metadata?.name;
  if (typeof name !== "string" || name === "") {
    throw new TypeError(`Cannot ${verb} CRDs: crds[${i}] has no metadata.name`);
  }
  if (crd.kind !== "CustomResourceDefinition") {
    throw new TypeError(
      `Cannot ${verb} CRDs: crds[${i}] (${name}) must be a CustomResourceDefinition, got kind ` +
        JSON.stringify(crd.kind),
    );
  }
  return name;
}

function conditionsOf(crd: KubeObject): CrdCondition[] {
  return (crd.status as { conditions?: CrdCondition[] } | undefined)?.conditions ?? [];
}

/** `Established=False (Installing: the initial names have not been accepted)`, ... */
function describe(conditions: readonly CrdCondition[]): string {
  if (conditions.length === 0) return "none yet";
  return conditions.map((c) => {
    const why = [c.reason, c.message].filter(Boolean).join(": ");
    return `${c.type}=${c.status}${why ? ` (${why})` : ""}`;
  }).join(", ");
}
