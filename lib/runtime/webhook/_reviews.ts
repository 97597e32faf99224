/**
 * The wire form of what the API server sends a webhook and takes back:
 * `admission.k8s.io/v1` `AdmissionReview` and `apiextensions.k8s.io/v1`
 * `ConversionReview`, read from a request body of at most 7 MiB (the API
 * server's own limit on a request is 3 MiB of object, twice in an update,
 * plus the envelope). Anything else is a {@link ReviewError} that names
 * what is wrong, for a 400.
 *
 * @module
 */
import type { KubeObject } from "../../kube/types.ts";
import type { AdmissionOutcome } from "./admission.ts";
import type { AdmissionRequest, Operation } from "./spec.ts";

/** The largest request body read, in bytes. */
export const MAX_REVIEW_BYTES = 7 * 1024 * 1024;

const ADMISSION_API_VERSION = "admission.k8s.io/v1";
const CONVERSION_API_VERSION = "apiextensions.k8s.io/v1";
/** The operations a webhook is registered for; kinglet registers none for CONNECT. */
const OPERATIONS: readonly string[] = ["CREATE", "UPDATE", "DELETE"];

/** The metav1.Status reason of a denial's code, where Kubernetes names one. */
const STATUS_REASONS: Readonly<Record<number, string>> = {
  400: "BadRequest",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** A request body the server cannot take; `status` is the HTTP answer. */
export class ReviewError extends Error {
  override readonly name = "ReviewError";

  /** `message` says what is wrong, for the API server's log. */
  constructor(readonly status: 400, message: string) {
    super(message);
  }
}

/** One `ConversionReview` request, decoded. */
export interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: KubeObject[];
}

type Json = Record<string, unknown>;

/**
 * The JSON of `request`'s body, read up to {@link MAX_REVIEW_BYTES}.
 *
 * @throws {ReviewError} 400 when longer, empty or not JSON.
 */
export async function readJsonBody(request: Request, limit = MAX_REVIEW_BYTES): Promise<unknown> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limit) throw tooLarge(declared, limit);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body ?? []) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge(size, limit);
    chunks.push(chunk);
  }
  if (size === 0) throw new ReviewError(400, "the request has no body; expected a JSON review");
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw new ReviewError(400, `the request body is not JSON: ${(error as Error).message}`);
  }
}

/**
 * The request of an `admission.k8s.io/v1` `AdmissionReview`.
 *
 * @throws {ReviewError} 400 naming the first field that is missing or of the wrong type.
 */
export function decodeAdmissionReview(body: unknown): AdmissionRequest {
  const request = envelope(body, ADMISSION_API_VERSION, "AdmissionReview");
  const uid = text(request, "uid", true);
  const operation = text(request, "operation", true);
  if (!OPERATIONS.includes(operation)) {
    throw new ReviewError(
      400,
      `request.operation must be one of ${OPERATIONS.join(", ")}, got ${JSON.stringify(operation)}`,
    );
  }
  const object = optionalObject(request, "object");
  const oldObject = optionalObject(request, "oldObject");
  const userInfo = isRecord(request.userInfo) ? request.userInfo : {};
  const groups = Array.isArray(userInfo.groups)
    ? userInfo.groups.filter((g): g is string => typeof g === "string")
    : undefined;
  return {
    uid,
    operation: operation as Operation,
    ...(object && { object }),
    ...(oldObject && { oldObject }),
    namespace: text(request, "namespace", false),
    name: text(request, "name", false),
    userInfo: {
      ...(typeof userInfo.username === "string" && { username: userInfo.username }),
      ...(groups && { groups }),
    },
    dryRun: request.dryRun === true,
  };
}

/** The `AdmissionReview` answering request `uid` with `outcome`. */
export function admissionReviewResponse(uid: string, outcome: AdmissionOutcome): Json {
  const response: Json = { uid, allowed: outcome.allowed };
  if (!outcome.allowed) {
    const code = outcome.code ?? 403;
    const reason = STATUS_REASONS[code];
    response.status = { code, message: outcome.message ?? "denied", ...(reason && { reason }) };
  }
  if (outcome.warnings?.length) response.warnings = outcome.warnings;
  if (outcome.patch?.length) {
    response.patchType = "JSONPatch";
    response.patch = new TextEncoder().encode(JSON.stringify(outcome.patch)).toBase64();
  }
  return { apiVersion: ADMISSION_API_VERSION, kind: "AdmissionReview", response };
}

/**
 * The request of an `apiextensions.k8s.io/v1` `ConversionReview`.
 *
 * @throws {ReviewError} 400 naming the first field that is missing or of the wrong type.
 */
export function decodeConversionReview(body: unknown): ConversionRequest {
  const request = envelope(body, CONVERSION_API_VERSION, "ConversionReview");
  const objects = request.objects;
  if (!Array.isArray(objects) || !objects.every(isRecord)) {
    throw new ReviewError(400, "request.objects must be a list of objects");
  }
  return {
    uid: text(request, "uid", true),
    desiredAPIVersion: text(request, "desiredAPIVersion", true),
    objects: objects as KubeObject[],
  };
}

/** The `ConversionReview` answering request `uid`: the objects, or why they could not be. */
export function conversionReviewResponse(
  uid: string,
  result: { convertedObjects: KubeObject[] } | { message: string },
): Json {
  const response = "message" in result
    ? { uid, convertedObjects: [], result: { status: "Failure", message: result.message } }
    : { uid, convertedObjects: result.convertedObjects, result: { status: "Success" } };
  return { apiVersion: CONVERSION_API_VERSION, kind: "ConversionReview", response };
}

function envelope(body: unknown, apiVersion: string, kind: string): Json {
  if (!isRecord(body)) throw new ReviewError(400, `expected a ${kind} object`);
  if (body.kind !== kind || body.apiVersion !== apiVersion) {
    throw new ReviewError(
      400,
      `expected kind ${kind} of apiVersion ${apiVersion}, got kind ${
        JSON.stringify(body.kind)
      } of apiVersion ${JSON.stringify(body.apiVersion)}`,
    );
  }
  if (!isRecord(body.request)) throw new ReviewError(400, `the ${kind} has no request`);
  return body.request;
}

function text(request: Json, field: string, required: boolean): string {
  const value = request[field];
  if (typeof value === "string" && (value || !required)) return value;
  if (value === undefined && !required) return "";
  throw new ReviewError(400, `request.${field} must be a ${required ? "non-empty " : ""}string`);
}

function optionalObject(request: Json, field: string): KubeObject | undefined {
  const value = request[field];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new ReviewError(400, `request.${field} must be an object`);
  return value as KubeObject;
}

function tooLarge(size: number, limit: number): ReviewError {
  return new ReviewError(
    400,
    `the request body of ${size} bytes exceeds the limit of ${limit} bytes`,
  );
}

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
