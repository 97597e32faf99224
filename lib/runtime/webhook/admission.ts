/**
 * One admission, decided: runs a webhook's validator or defaulter on a
 * request within the handler's time limit, and answers for a handler that
 * throws or runs late as its failure policy says. The webhook server and the
 * test kit's `MemoryCluster` both admit through {@link admit}, so a unit test
 * sees what the API server will.
 *
 * What the caller must know:
 *
 * - A validator runs only on the operations its webhook lists
 *   (`CREATE` and `UPDATE` unless told); any other is allowed untouched.
 *   A defaulter runs on `CREATE` and `UPDATE` (there is nothing to default
 *   on `DELETE`).
 * - A defaulter gets a copy of the object; the outcome carries the JSON
 *   Patch from the request's object to what it returned, absent when
 *   nothing changed.
 * - A handler that throws or runs past its time is a failure: under
 *   `failurePolicy: "Fail"` (the default) a denial whose message says what
 *   happened, under `"Ignore"` an allow. Either way it is logged once, with
 *   the object, and reported on {@link AdmissionOutcome.failure} for the
 *   caller's count. The handler's signal is aborted when its time is up; a
 *   handler that blocks the event loop cannot be cut short.
 *
 * @example
 * ```ts
 * import { admit } from "./admission.ts";
 * import { allowed, denied, type AdmissionWebhook } from "./spec.ts";
 * const webhook: AdmissionWebhook = {
 *   resource: { group: "example.com", version: "v1", plural: "webapps", kind: "WebApp", namespaced: true },
 *   validate: ({ object }) => object?.spec ? allowed() : denied("spec is required"),
 * };
 * const client = { get: () => Promise.reject(new Error()), list: () => Promise.reject(new Error()) };
 * const outcome = await admit(webhook, "validate", {
 *   uid: "1", operation: "CREATE", object: { metadata: { name: "web" } },
 *   namespace: "default", name: "web", userInfo: {}, dryRun: false,
 * }, { client });
 * outcome; // { allowed: false, message: "spec is required", code: 403 }
 * ```
 *
 * @module
 */
import { type Clock, deadline, systemClock } from "../../async/clock.ts";
import type { KubeObject } from "../../kube/types.ts";
import { logger } from "../../log.ts";
import { describeError } from "../../kube/errors.ts";
import { jsonPatchBetween, type JsonPatchOperation } from "./json_patch.ts";
import type {
  AdmissionContext,
  AdmissionRequest,
  AdmissionWebhook,
  Operation,
  WebhookClient,
} from "./spec.ts";

/** Which handler of a webhook runs: its validator or its defaulter. */
export type AdmissionKind = "validate" | "mutate";

/** Why a handler did not answer for itself. */
export type HandlerFailureReason = "error" | "timeout";

/** The answer to one admission request. */
export interface AdmissionOutcome {
  /** Whether the change may proceed. */
  allowed: boolean;
  /** Why it was denied; `kubectl` prints it. */
  message?: string;
  /** The HTTP code of a denial (403 unless the validator said otherwise). */
  code?: number;
  /** Warnings `kubectl` prints, allowed or not. */
  warnings?: string[];
  /** The defaulter's changes; absent when it changed nothing. */
  patch?: JsonPatchOperation[];
  /** Set when the handler threw or ran past its time and the failure policy answered. */
  failure?: { reason: HandlerFailureReason; error: unknown };
}

/** What {@link admit} needs besides the request. */
export interface AdmitContext {
  /** Reads the cluster for the handler. */
  client: WebhookClient;
  /** Aborts the handler when the caller gives up (the server stops). */
  signal?: AbortSignal;
  /** Times the handler. @default systemClock */
  clock?: Clock;
}

/** Operations a validator runs on when its webhook names none. */
export const DEFAULT_OPERATIONS: readonly Operation[] = ["CREATE", "UPDATE"];

/** The HTTP code of a denial for a handler that failed: 500 when it threw, 504 when late. */
const FAILURE_CODES: Readonly<Record<HandlerFailureReason, number>> = { error: 500, timeout: 504 };

/**
 * How long `webhook`'s handler may run: `handlerTimeoutMs`, else half a
 * second less than `timeoutSeconds` (10 by default), so the server answers
 * before the API server stops waiting.
 *
 * @throws {RangeError} when `timeoutSeconds` is not 1 to 30, or `handlerTimeoutMs` not positive.
 */
export function handlerTimeoutMs(webhook: AdmissionWebhook): number {
  const seconds = webhook.timeoutSeconds ?? 10;
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 30) {
    throw new RangeError(
      `Cannot admit ${webhook.resource.kind}: 'timeoutSeconds' must be an integer from 1 to 30, got ${seconds}`,
    );
  }
  const ms = webhook.handlerTimeoutMs ?? seconds * 1000 - 500;
  if (!(ms > 0)) {
    throw new RangeError(
      `Cannot admit ${webhook.resource.kind}: 'handlerTimeoutMs' must be positive, got ${ms}`,
    );
  }
  return ms;
}

/**
 * Runs `webhook`'s validator (`"validate"`) or defaulter (`"mutate"`) on
 * `request` and answers for it; never rejects for the handler's sake.
 *
 * @throws {TypeError} when `webhook` has no handler of that kind.
 */
export async function admit(
  webhook: AdmissionWebhook,
  kind: AdmissionKind,
  request: AdmissionRequest,
  context: AdmitContext,
): Promise<AdmissionOutcome> {
  const handler = kind === "validate" ? webhook.validate : webhook.default;
  if (!handler) {
    throw new TypeError(
      `Cannot ${kind} ${webhook.resource.kind}: the webhook has no '${
        kind === "validate" ? "validate" : "default"
      }' handler`,
    );
  }
  const operations = kind === "validate"
    ? webhook.operations ?? DEFAULT_OPERATIONS
    : DEFAULT_OPERATIONS;
  if (!operations.includes(request.operation)) return { allowed: true };
  if (kind === "mutate" && !request.object) return { allowed: true };

  const limit = handlerTimeoutMs(webhook);
  using time = deadline(context.clock ?? systemClock, limit);
  const signal = context.signal ? AbortSignal.any([context.signal, time.signal]) : time.signal;
  const late = new Promise<never>((_, reject) =>
    time.signal.addEventListener("abort", () => reject(new HandlerTimeoutError(limit)), {
      once: true,
    })
  );
  const lent: AdmissionContext = { signal, client: context.client };
  try {
    const run = kind === "validate"
      ? validate(webhook, request, lent)
      : mutate(webhook, request, lent);
    return await Promise.race([run, late]);
  } catch (error) {
    return failed(webhook, kind, request, error);
  }
}

/** A handler ran past its time. */
export class HandlerTimeoutError extends Error {
  /** Always `HandlerTimeoutError`. */
  override readonly name = "HandlerTimeoutError";

  /** Says how long the handler had. */
  constructor(readonly limitMs: number) {
    super(`the handler did not answer within ${limitMs} ms`);
  }
}

async function validate(
  webhook: AdmissionWebhook,
  request: AdmissionRequest,
  context: AdmissionContext,
): Promise<AdmissionOutcome> {
  const verdict = await webhook.validate!(request, context);
  const warnings = verdict.warnings?.length ? { warnings: [...verdict.warnings] } : {};
  if (verdict.allowed) return { allowed: true, ...warnings };
  return { allowed: false, message: verdict.message, code: verdict.code ?? 403, ...warnings };
}

async function mutate(
  webhook: AdmissionWebhook,
  request: AdmissionRequest,
  context: AdmissionContext,
): Promise<AdmissionOutcome> {
  const given = request.object!;
  const defaulted: KubeObject = await webhook.default!(structuredClone(given), {
    ...context,
    request,
  });
  if (typeof defaulted !== "object" || defaulted === null || Array.isArray(defaulted)) {
    throw new TypeError(`the defaulter returned ${describeValue(defaulted)}, not an object`);
  }
  const patch = jsonPatchBetween(given, defaulted);
  return patch.length > 0 ? { allowed: true, patch } : { allowed: true };
}

/** The failure policy's answer for a handler that threw or ran late, logged once. */
function failed(
  webhook: AdmissionWebhook,
  kind: AdmissionKind,
  request: AdmissionRequest,
  error: unknown,
): AdmissionOutcome {
  const reason: HandlerFailureReason = error instanceof HandlerTimeoutError ? "timeout" : "error";
  const policy = webhook.failurePolicy ?? "Fail";
  const what = reason === "timeout"
    ? (error as HandlerTimeoutError).message
    : `the handler failed: ${describeError(error)}`;
  const object = request.namespace ? `${request.namespace}/${request.name}` : request.name;
  logger("webhook").error(
    "{kind} of {resource} {object} ({operation}): {what}; failure policy {policy}",
    { kind, resource: webhook.resource.plural, object, operation: request.operation, what, policy },
  );
  const failure = { reason, error };
  if (policy === "Ignore") return { allowed: true, failure };
  const message = `${
    kind === "validate" ? "validation" : "defaulting"
  } of ${webhook.resource.kind} ${object || "(unnamed)"} failed: ${what}`;
  return { allowed: false, message, code: FAILURE_CODES[reason], failure };
}

function describeValue(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}
