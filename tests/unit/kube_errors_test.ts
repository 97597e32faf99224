import assert from "node:assert/strict";
import {
  ApiError,
  apiErrorFromResponse,
  apiErrorFromStatus,
  describeError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isTooManyRequests,
  isUnauthorized,
  TransportError,
} from "../../lib/kube/errors.ts";

const site = { verb: "get", path: "/api/v1/namespaces/shop/configmaps/web" };

function response(status: number, statusText: string, headers: Record<string, string> = {}) {
  return { status, statusText, headers: new Headers(headers) };
}

function statusBody(
  code: number,
  reason: string,
  message: string,
  details: Record<string, unknown> = {},
) {
  return JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    code,
    reason,
    message,
    details,
  });
}

Deno.test("a metav1.Status body gives status, reason, message and causes", () => {
  const body = statusBody(
    422,
    "Invalid",
    'ConfigMap "web" is invalid: data[bad key]: Invalid value',
    {
      name: "web",
      kind: "ConfigMap",
      causes: [{
        reason: "FieldValueInvalid",
        message: 'Invalid value: "bad key"',
        field: "data[bad key]",
      }, "junk"],
    },
  );
  const err = apiErrorFromResponse(response(422, "Unprocessable Entity"), body, {
    ...site,
    verb: "create",
  });
  assert.equal(err.status, 422);
  assert.equal(err.reason, "Invalid");
  assert.deepEqual(err.causes, [{
    reason: "FieldValueInvalid",
    message: 'Invalid value: "bad key"',
    field: "data[bad key]",
  }]);
  assert.equal(
    err.message,
    `create ${site.path}: ConfigMap "web" is invalid: data[bad key]: Invalid value (422 Invalid)`,
  );
  assert.equal(err.retryable, false);
  assert.ok(isInvalid(err));
  assert.equal(err.verb, "create");
  assert.equal(err.path, site.path);
});

Deno.test("Retry-After is honoured, and wins over the Status details", () => {
  const throttled = statusBody(429, "TooManyRequests", "too many requests", {
    retryAfterSeconds: 1,
  });
  const fromDetails = apiErrorFromResponse(response(429, "Too Many Requests"), throttled, site);
  assert.equal(fromDetails.retryAfterSeconds, 1);
  assert.equal(fromDetails.retryable, true);
  assert.ok(isTooManyRequests(fromDetails));
  const fromHeader = apiErrorFromResponse(
    response(429, "Too Many Requests", { "retry-after": "7" }),
    throttled,
    site,
  );
  assert.equal(fromHeader.retryAfterSeconds, 7);
  const plain = apiErrorFromResponse(
    response(503, "Service Unavailable", { "retry-after": "3" }),
    "",
    site,
  );
  assert.equal(plain.retryAfterSeconds, 3);
  assert.equal(plain.reason, "ServiceUnavailable");
  const garbageHeader = apiErrorFromResponse(
    response(503, "", { "retry-after": "soon" }),
    "",
    site,
  );
  assert.equal(garbageHeader.retryAfterSeconds, undefined);
});

Deno.test("a body that is not a Status still gives a clear message with an excerpt", () => {
  const html = `<html><body><h1>502 Bad Gateway</h1>${"x".repeat(400)}</body></html>`;
  const err = apiErrorFromResponse(response(502, "Bad Gateway"), html, site);
  assert.equal(err.status, 502);
  assert.equal(err.reason, "InternalError");
  assert.equal(err.retryable, true);
  assert.match(
    err.message,
    /^get \/api\/v1\/.*: HTTP 502 Bad Gateway without a Kubernetes Status body: "<html><body><h1>502 Bad Gateway<\/h1>x+\.\.\." \(502 InternalError\)$/,
  );
  const empty = apiErrorFromResponse(response(404, "Not Found"), "", site);
  assert.match(
    empty.message,
    /HTTP 404 Not Found without a Kubernetes Status body \(empty body\) \(404 NotFound\)/,
  );
  assert.ok(isNotFound(empty));
  const json = apiErrorFromResponse(response(400, "Bad Request"), '{"error":"nope"}', site);
  assert.match(json.message, /without a Kubernetes Status body: "\{\\"error\\":\\"nope\\"\}"/);
});

Deno.test("a Status with no reason gets client-go's reason for its code", () => {
  const err = apiErrorFromStatus({ kind: "Status", code: 403, message: "denied" }, 500, site);
  assert.equal(err.status, 403);
  assert.equal(err.reason, "Forbidden");
  const noCode = apiErrorFromStatus({ message: "boom" }, 500, site);
  assert.equal(noCode.status, 500);
  assert.equal(noCode.reason, "InternalError");
  assert.equal(apiErrorFromStatus("not an object", 418, site).reason, "Unknown");
});

Deno.test("410 always reads as Gone, whatever reason the server gave", () => {
  const err = apiErrorFromStatus(
    { kind: "Status", code: 410, reason: "Expired", message: "too old" },
    500,
    site,
  );
  assert.equal(err.reason, "Gone");
  assert.ok(isGone(err));
});

Deno.test("the predicates tell the reasons apart", () => {
  const e = (status: number, reason?: string) =>
    new ApiError({ status, message: "m", ...(reason ? { reason } : {}), ...site });
  assert.ok(isConflict(e(409)));
  assert.ok(!isConflict(e(409, "AlreadyExists")));
  assert.ok(isAlreadyExists(e(409, "AlreadyExists")));
  assert.ok(isForbidden(e(403)));
  assert.ok(isUnauthorized(e(401)));
  assert.ok(!isNotFound(e(403)));
  assert.ok(!isNotFound(new Error("404")));
  assert.equal(e(409).retryable, false, "a conflict is for the caller to resolve");
  assert.equal(e(504).reason, "Timeout");
  assert.equal(e(504).retryable, true);
  assert.equal(e(500, "ServerTimeout").retryable, true);
  assert.equal(e(400, "Timeout").retryable, true);
  assert.equal(new TransportError("reset").retryable, true);
});

Deno.test("an ApiError with a hint appends what to do", () => {
  const err = new ApiError({
    status: 401,
    message: "Unauthorized",
    hint: "check the token",
    ...site,
  });
  assert.equal(err.message, `get ${site.path}: Unauthorized (401 Unauthorized); check the token`);
});

Deno.test("describeError follows the cause chain, where Deno's fetch keeps the detail", () => {
  const inner = new Error("client error (Connect): invalid peer certificate: UnknownIssuer");
  assert.equal(
    describeError(new TypeError("fetch failed", { cause: inner })),
    "fetch failed: client error (Connect): invalid peer certificate: UnknownIssuer",
  );
  assert.equal(describeError("plain"), "plain");
  const same = new Error("reset", { cause: new Error("reset") });
  assert.equal(describeError(same), "reset", "repeated messages are said once");
});
