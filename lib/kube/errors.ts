/**
 * Typed errors of the Kubernetes client, one class per failure site:
 * {@link ApiError} (the API server answered with a non-2xx status),
 * {@link TransportError} (no answer: connection, TLS, timeout),
 * {@link WatchDecodeError} (a watch stream carried something that is not an
 * event) and {@link ConfigError} (the kubeconfig or in-cluster setup is
 * unusable). Each says whether retrying can help.
 *
 * @example
 * ```ts
 * import { ApiError, isNotFound } from "./errors.ts";
 * const err = new ApiError({ status: 404, message: 'configmaps "x" not found', verb: "get", path: "/api/v1/namespaces/default/configmaps/x" });
 * isNotFound(err); // true
 * err.reason; // "NotFound"
 * ```
 *
 * @module
 */

/** One cause of a metav1.Status, e.g. the field that failed validation. */
export interface StatusCause {
  /** The field at fault, e.g. `spec.replicas`. */
  field?: string;
  /** What is wrong with it. */
  message?: string;
  /** A machine-readable reason, e.g. `FieldValueInvalid`. */
  reason?: string;
}

/** What {@link ApiError} is built from. */
export interface ApiErrorInit {
  /** HTTP status (or the `code` of an ERROR watch event). */
  status: number;
  /** metav1.Status reason; derived from `status` when absent. */
  reason?: string;
  /** The server's message, without the verb and path. */
  message: string;
  /** Details of the failure, e.g. one per invalid field. */
  causes?: StatusCause[];
  /** Seconds the server asked to wait before retrying. */
  retryAfterSeconds?: number;
  /** The verb of the request, e.g. `GET`. */
  verb: string;
  /** The path of the request. */
  path: string;
  /** Appended to the message to tell the reader what to do. */
  hint?: string;
}

/** The reason client-go assigns to a status code when the server gives none. */
const REASON_BY_STATUS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Gone",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** A non-2xx answer from the API server, or an ERROR event of a watch. */
export class ApiError extends Error {
  /** Always `ApiError`. */
  override readonly name = "ApiError";
  /** HTTP status. */
  readonly status: number;
  /** metav1.Status reason: NotFound, AlreadyExists, Conflict, Gone, Invalid, ... */
  readonly reason: string;
  /** Details of the failure, e.g. one per invalid field. */
  readonly causes: StatusCause[];
  /** Seconds the server asked us to wait, from `Retry-After` or the Status details. */
  readonly retryAfterSeconds?: number;
  /**
   * True for 429, 5xx, Timeout and ServerTimeout. A 409 Conflict is not
   * retryable here: only the caller knows whether re-reading and retrying is right.
   */
  readonly retryable: boolean;
  /** The verb of the failed request. */
  readonly verb: string;
  /** The path of the failed request. */
  readonly path: string;

  /** Builds the error and its message from what the server answered. */
  constructor(init: ApiErrorInit) {
    const reason = init.reason || REASON_BY_STATUS[init.status] ||
      (init.status >= 500 ? "InternalError" : "Unknown");
    const hint = init.hint ? `; ${init.hint}` : "";
    super(`${init.verb} ${init.path}: ${init.message} (${init.status} ${reason})${hint}`);
    this.status = init.status;
    this.reason = reason;
    this.causes = init.causes ?? [];
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
    this.retryable = init.status === 429 || init.status >= 500 || reason === "Timeout" ||
      reason === "ServerTimeout";
    this.verb = init.verb;
    this.path = init.path;
  }
}

/** Where an error happened, for {@link apiErrorFromStatus} and {@link apiErrorFromResponse}. */
export interface ErrorSite {
  /** The verb of the request. */
  verb: string;
  /** The path of the request. */
  path: string;
  /** Appended to the message to tell the reader what to do. */
  hint?: string;
  /** Wins over `details.retryAfterSeconds` of the Status (it comes from `Retry-After`). */
  retryAfterSeconds?: number;
}

/**
 * Builds an {@link ApiError} from a decoded metav1.Status (the body of an
 * error response or the object of an ERROR watch event). `code` is used when
 * the Status carries none. A 410 always gets reason "Gone", even when the
 * server says "Expired", so that one check covers every "resourceVersion too
 * old" answer.
 */
export function apiErrorFromStatus(status: unknown, code: number, site: ErrorSite): ApiError {
  const s = isRecord(status) ? status : {};
  const details = isRecord(s.details) ? s.details : {};
  const httpStatus = typeof s.code === "number" && s.code > 0 ? s.code : code;
  const causes = Array.isArray(details.causes)
    ? details.causes.filter(isRecord).map((c) => ({
      ...(typeof c.field === "string" ? { field: c.field } : {}),
      ...(typeof c.message === "string" ? { message: c.message } : {}),
      ...(typeof c.reason === "string" ? { reason: c.reason } : {}),
    }))
    : [];
  const serverReason = typeof s.reason === "string" ? s.reason : undefined;
  return new ApiError({
    ...site,
    status: httpStatus,
    reason: httpStatus === 410 ? "Gone" : serverReason,
    message: typeof s.message === "string" && s.message ? s.message : "no message",
    causes,
    retryAfterSeconds: site.retryAfterSeconds ??
      (typeof details.retryAfterSeconds === "number" ? details.retryAfterSeconds : undefined),
  });
}

/**
 * Builds an {@link ApiError} from a non-2xx response whose body was read as
 * text. A metav1.Status body is parsed; anything else (an HTML page from a
 * proxy, plain text) is quoted, shortened, in the message. `Retry-After`
 * (in seconds) wins over the Status details.
 *
 * @example
 * ```ts
 * import { apiErrorFromResponse } from "./errors.ts";
 * const response = new Response("<html>Bad Gateway</html>", { status: 502, statusText: "Bad Gateway" });
 * const err = apiErrorFromResponse(response, await response.text(), { verb: "list", path: "/api/v1/pods" });
 * err.message; // 'list /api/v1/pods: HTTP 502 Bad Gateway without a Kubernetes Status body: "<html>Bad Gateway</html>" (502 InternalError)'
 * ```
 */
export function apiErrorFromResponse(
  response: { status: number; statusText: string; headers: Headers },
  body: string,
  site: ErrorSite,
): ApiError {
  const retryAfter = Number.parseInt(response.headers.get("retry-after") ?? "", 10);
  const at: ErrorSite = retryAfter >= 0 ? { ...site, retryAfterSeconds: retryAfter } : site;
  let decoded: unknown;
  try {
    decoded = JSON.parse(body);
  } catch {
    decoded = undefined;
  }
  if (isRecord(decoded) && decoded.kind === "Status") {
    return apiErrorFromStatus(decoded, response.status, at);
  }
  const text = body.trim().replace(/\s+/g, " ");
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}...` : text;
  const statusLine = `HTTP ${response.status} ${response.statusText}`.trim();
  return new ApiError({
    ...at,
    status: response.status,
    message: `${statusLine} without a Kubernetes Status body` +
      (excerpt ? `: ${JSON.stringify(excerpt)}` : " (empty body)"),
  });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Where a {@link TransportError} could not get through, for a line that names no request. */
export interface TransportErrorOptions extends ErrorOptions {
  /** The API server that could not be reached, when no connection was made at all. */
  server?: string;
  /** Why, without the request's verb and path, e.g. "connection refused". */
  reason?: string;
}

/** No answer from the API server: connection refused or reset, TLS failure, timeout. */
export class TransportError extends Error {
  /** Always `TransportError`. */
  override readonly name = "TransportError";
  /** Always true: the request may succeed when tried again. */
  readonly retryable = true;
  /**
   * Set when the server could not be reached at all (connection, TLS,
   * timeout): every request to it fails the same way until it can.
   */
  readonly server?: string;
  /** The cause without the request, set together with {@link TransportError.server}. */
  readonly reason?: string;

  /** Wraps what stopped the request (`options.cause`) with a message that names it. */
  constructor(message: string, options?: TransportErrorOptions) {
    super(message, options);
    if (options?.server !== undefined) this.server = options.server;
    if (options?.reason !== undefined) this.reason = options.reason;
  }
}

/**
 * A watch stream carried a line that is not a watch event. The watch is
 * over; the caller should start a new one.
 */
export class WatchDecodeError extends Error {
  /** Always `WatchDecodeError`. */
  override readonly name = "WatchDecodeError";
  /** Always true: a new watch may decode. */
  readonly retryable = true;
  /** The start of what arrived instead of an event. */
  readonly received: string;

  /** Keeps the start of what arrived as {@link WatchDecodeError.received}. */
  constructor(message: string, received: string, options?: ErrorOptions) {
    super(message, options);
    this.received = received;
  }
}

/**
 * The kubeconfig or in-cluster setup cannot be used. The message says what is
 * wrong, where (file path, context, cluster or user name) and what to do.
 */
export class ConfigError extends Error {
  /** Always `ConfigError`. */
  override readonly name = "ConfigError";
  /** Always false: the configuration must change first. */
  readonly retryable = false;

  /** Creates the error; the message says what, where and what to do. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

function hasStatus(e: unknown, status: number, reason: string): boolean {
  return e instanceof ApiError && (e.status === status || e.reason === reason);
}

/** True for a 404 NotFound {@link ApiError}. */
export function isNotFound(e: unknown): boolean {
  return hasStatus(e, 404, "NotFound");
}

/** True for a 409 Conflict (a stale resourceVersion or an apply conflict). */
export function isConflict(e: unknown): boolean {
  return e instanceof ApiError && e.reason === "Conflict";
}

/** True for a 409 AlreadyExists. */
export function isAlreadyExists(e: unknown): boolean {
  return e instanceof ApiError && e.reason === "AlreadyExists";
}

/** True for a 410 Gone: the resourceVersion is too old, relist. */
export function isGone(e: unknown): boolean {
  return hasStatus(e, 410, "Gone");
}

/** True for a 403 Forbidden. */
export function isForbidden(e: unknown): boolean {
  return hasStatus(e, 403, "Forbidden");
}

/** True for a 401 Unauthorized. */
export function isUnauthorized(e: unknown): boolean {
  return hasStatus(e, 401, "Unauthorized");
}

/** True for a 429 TooManyRequests. */
export function isTooManyRequests(e: unknown): boolean {
  return hasStatus(e, 429, "TooManyRequests");
}

/** True for a 422 Invalid. */
export function isInvalid(e: unknown): boolean {
  return hasStatus(e, 422, "Invalid");
}

/**
 * The message of an error followed by those of its causes, e.g. "fetch
 * failed: error sending request: client error (Connect): invalid peer
 * certificate: UnknownIssuer". Deno's fetch puts the useful part in `cause`.
 *
 * @example
 * ```ts
 * import { describeError } from "./errors.ts";
 * describeError(new TypeError("fetch failed", { cause: new Error("connection refused") }));
 * // "fetch failed: connection refused"
 * ```
 */
export function describeError(e: unknown): string {
  const parts: string[] = [];
  for (let current = e, depth = 0; current !== undefined && depth < 5; depth++) {
    const text = current instanceof Error ? current.message : String(current);
    if (text && !parts.some((p) => p.includes(text))) parts.push(text);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(": ");
}
