import assert from "node:assert/strict";
import { FakeClock } from "../../lib/async/mod.ts";
import type { KubeObject, Resource } from "../../lib/kube/mod.ts";
import { resetLogging, setupLogging } from "../../lib/log.ts";
import {
  type AdmissionRequest,
  type AdmissionWebhook,
  admit,
  allowed,
  denied,
  handlerTimeoutMs,
} from "../../lib/runtime/webhook/mod.ts";

const WEBAPPS: Resource = {
  group: "example.com",
  version: "v1",
  plural: "webapps",
  kind: "WebApp",
  namespaced: true,
};
const client = {
  get: () => Promise.reject(new Error("no cluster")),
  list: () => Promise.reject(new Error("no cluster")),
};

function request(overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: "u1",
    operation: "CREATE",
    object: { apiVersion: "example.com/v1", kind: "WebApp", metadata: { name: "web" }, spec: {} },
    namespace: "shop",
    name: "web",
    userInfo: { username: "alice" },
    dryRun: false,
    ...overrides,
  };
}

/** Log lines written while `body` runs. */
async function logged(body: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  setupLogging({ format: "text", write: (line) => lines.push(line) });
  try {
    await body();
  } finally {
    resetLogging();
  }
  return lines;
}

Deno.test("a validator's denial carries its message, code and warnings", async () => {
  const webhook: AdmissionWebhook = {
    resource: WEBAPPS,
    validate: () => ({ ...denied("image is required", 422), warnings: ["deprecated field"] }),
  };
  assert.deepEqual(await admit(webhook, "validate", request(), { client }), {
    allowed: false,
    message: "image is required",
    code: 422,
    warnings: ["deprecated field"],
  });
  const allows: AdmissionWebhook = { resource: WEBAPPS, validate: () => allowed("mind the gap") };
  assert.deepEqual(await admit(allows, "validate", request(), { client }), {
    allowed: true,
    warnings: ["mind the gap"],
  });
});

Deno.test("a validator runs only on its operations, CREATE and UPDATE unless told", async () => {
  let calls = 0;
  const webhook: AdmissionWebhook = {
    resource: WEBAPPS,
    validate: () => (calls++, denied("no")),
  };
  const deletion = request({ operation: "DELETE", object: undefined, oldObject: request().object });
  assert.deepEqual(await admit(webhook, "validate", deletion, { client }), { allowed: true });
  assert.equal(calls, 0);
  const deletes: AdmissionWebhook = { ...webhook, operations: ["DELETE"] };
  assert.equal((await admit(deletes, "validate", deletion, { client })).allowed, false);
  assert.equal((await admit(deletes, "validate", request(), { client })).allowed, true);
  assert.equal(calls, 1);
});

Deno.test("a validator sees the request, the client and a live signal", async () => {
  let seen: { name?: string; username?: string; aborted?: boolean; client?: unknown } = {};
  const webhook: AdmissionWebhook = {
    resource: WEBAPPS,
    validate: (req, context) => {
      seen = {
        name: req.object?.metadata?.name,
        username: req.userInfo.username,
        aborted: context.signal.aborted,
        client: context.client,
      };
      return allowed();
    },
  };
  await admit(webhook, "validate", request(), { client });
  assert.deepEqual(seen, { name: "web", username: "alice", aborted: false, client });
});

Deno.test("a defaulter's changes come back as the JSON patch from the request's object", async () => {
  const webhook: AdmissionWebhook<KubeObject & { spec?: { replicas?: number } }> = {
    resource: WEBAPPS,
    default: (object) => {
      object.spec = { replicas: 1, ...object.spec };
      object.metadata = { ...object.metadata, labels: { "app.kubernetes.io/name": "web" } };
      return object;
    },
  };
  const given = request();
  const outcome = await admit(webhook as AdmissionWebhook, "mutate", given, { client });
  assert.deepEqual(outcome, {
    allowed: true,
    patch: [
      { op: "add", path: "/metadata/labels", value: { "app.kubernetes.io/name": "web" } },
      { op: "add", path: "/spec/replicas", value: 1 },
    ],
  });
  assert.deepEqual(given.object?.spec, {}, "the request's object is left as it came");
});

Deno.test("a defaulter that changes nothing, or a DELETE, gives no patch", async () => {
  const webhook: AdmissionWebhook = { resource: WEBAPPS, default: (object) => object };
  assert.deepEqual(await admit(webhook, "mutate", request(), { client }), { allowed: true });
  const deletion = request({ operation: "DELETE", object: undefined });
  assert.deepEqual(await admit(webhook, "mutate", deletion, { client }), { allowed: true });
});

Deno.test("a handler that throws is a denial that says so under Fail, logged once with the object", async () => {
  const failure = new Error("the database is down");
  const webhook: AdmissionWebhook = {
    resource: WEBAPPS,
    validate: () => {
      throw failure;
    },
  };
  let outcome;
  const lines = await logged(async () => {
    outcome = await admit(webhook, "validate", request(), { client });
  });
  assert.deepEqual(outcome, {
    allowed: false,
    code: 500,
    message: "validation of WebApp shop/web failed: the handler failed: the database is down",
    failure: { reason: "error", error: failure },
  });
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /validate of webapps shop\/web \(CREATE\).*the database is down.*Fail/);
});

Deno.test("a handler that throws is an allow under Ignore, still reported", async () => {
  const webhook: AdmissionWebhook = {
    resource: WEBAPPS,
    failurePolicy: "Ignore",
    default: () => Promise.reject(new Error("boom")),
  };
  let outcome;
  const lines = await logged(async () => {
    outcome = await admit(webhook, "mutate", request(), { client });
  });
  assert.equal(outcome!.allowed, true);
  assert.equal(outcome!.failure?.reason, "error");
  assert.equal(outcome!.patch, undefined);
  assert.equal(lines.length, 1);
});

Deno.test("a defaulter that returns no object fails as a handler that throws", async () => {
  const webhook = {
    resource: WEBAPPS,
    default: () => undefined,
  } as unknown as AdmissionWebhook;
  const lines = await logged(async () => {
    const result = await admit(webhook, "mutate", request(), { client });
    assert.equal(result.allowed, false);
    assert.match(result.message!, /defaulting of WebApp shop\/web failed: .*returned undefined/);
  });
  assert.equal(lines.length, 1);
});

Deno.test("a handler past its time is denied under Fail and allowed under Ignore, its signal aborted", async () => {
  for (const failurePolicy of ["Fail", "Ignore"] as const) {
    const clock = new FakeClock();
    let signal: AbortSignal | undefined;
    const webhook: AdmissionWebhook = {
      resource: WEBAPPS,
      timeoutSeconds: 2,
      failurePolicy,
      validate: (_, context) => {
        signal = context.signal;
        return new Promise(() => {});
      },
    };
    await logged(async () => {
      const pending = admit(webhook, "validate", request(), { client, clock });
      await clock.advance(1_499);
      assert.equal(signal?.aborted, false);
      await clock.advance(1);
      const outcome = await pending;
      assert.equal(signal?.aborted, true);
      assert.equal(outcome.failure?.reason, "timeout");
      if (failurePolicy === "Ignore") assert.equal(outcome.allowed, true);
      else {
        assert.equal(outcome.allowed, false);
        assert.equal(outcome.code, 504);
        assert.equal(
          outcome.message,
          "validation of WebApp shop/web failed: the handler did not answer within 1500 ms",
        );
      }
    });
    assert.equal(clock.pending, 0, "no timer lingers");
  }
});

Deno.test("a handler that answers in time leaves no timer behind", async () => {
  const clock = new FakeClock();
  const webhook: AdmissionWebhook = { resource: WEBAPPS, validate: () => allowed() };
  await admit(webhook, "validate", request(), { client, clock });
  assert.equal(clock.pending, 0);
});

Deno.test("the handler's time defaults to half a second under timeoutSeconds; bad limits are refused", async () => {
  assert.equal(handlerTimeoutMs({ resource: WEBAPPS }), 9_500);
  assert.equal(handlerTimeoutMs({ resource: WEBAPPS, timeoutSeconds: 3 }), 2_500);
  assert.equal(handlerTimeoutMs({ resource: WEBAPPS, handlerTimeoutMs: 200 }), 200);
  assert.throws(
    () => handlerTimeoutMs({ resource: WEBAPPS, timeoutSeconds: 31 }),
    new RangeError(
      "Cannot admit WebApp: 'timeoutSeconds' must be an integer from 1 to 30, got 31",
    ),
  );
  assert.throws(() => handlerTimeoutMs({ resource: WEBAPPS, handlerTimeoutMs: 0 }), RangeError);
  await assert.rejects(
    admit({ resource: WEBAPPS }, "validate", request(), { client }),
    new TypeError("Cannot validate WebApp: the webhook has no 'validate' handler"),
  );
});
