/**
 * The webhook server over real HTTPS on loopback, with throwaway
 * certificates from the control plane's PKI, called as the API server calls
 * it: AdmissionReview and ConversionReview v1 bodies, POSTed.
 */
import assert from "node:assert/strict";
import type { KubeObject, Resource } from "../../lib/kube/mod.ts";
import { resetLogging, setupLogging } from "../../lib/log.ts";
import { RuntimeMetrics } from "../../lib/runtime/metrics/mod.ts";
import {
  type AdmissionWebhook,
  allowed,
  type CertificateSource,
  type Conversion,
  defineConversion,
  denied,
  type ServingCertificate,
  WebhookServer,
  type WebhookServerOptions,
} from "../../lib/runtime/webhook/mod.ts";
import { generatePki } from "../../lib/testing/control_plane/mod.ts";
import { jsonPatch, type Operation } from "../../lib/testing/_patches.ts";

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

/** A certificate source the test hands certificates to. */
class TestCertificates implements CertificateSource {
  #current: ServingCertificate | undefined;
  readonly #listeners = new Set<(c: ServingCertificate) => void>();

  current(): ServingCertificate | undefined {
    return this.#current;
  }

  subscribe(listener: (c: ServingCertificate) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  set(certificate: ServingCertificate): void {
    this.#current = certificate;
    for (const listener of this.#listeners) listener(certificate);
  }
}

/** A CA and a serving certificate for 127.0.0.1 it signed, as PEM. */
interface TestPki {
  ca: string;
  serving: ServingCertificate;
}

async function makePki(): Promise<TestPki> {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_webhook_" });
  try {
    const pki = await generatePki(dir, {});
    const read = (path: string) => Deno.readTextFile(path);
    return {
      ca: await read(pki.ca.cert),
      serving: { cert: await read(pki.serving.cert), key: await read(pki.serving.key) },
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const first = await makePki();
const second = await makePki();

const VALIDATING: AdmissionWebhook = {
  resource: WEBAPPS,
  validate: ({ object }) =>
    (object?.spec as { image?: string } | undefined)?.image
      ? allowed()
      : denied("spec.image is required"),
  default: (object) => {
    object.spec = { replicas: 1, ...object.spec as object };
    object.metadata = { ...object.metadata, labels: { "app.kubernetes.io/name": "web" } };
    return object;
  },
};

const CONVERSION = defineConversion({
  resource: { ...WEBAPPS, version: "v2" },
  hub: "v2",
  versions: {
    v1: {
      toHub: ({ spec, ...rest }) => ({
        ...rest,
        spec: { replicas: (spec as { size: number }).size },
      }),
      fromHub: ({ spec, ...rest }) => ({
        ...rest,
        spec: { size: (spec as { replicas: number }).replicas },
      }),
    },
  },
});

interface Running {
  url: (path: string) => string;
  certificates: TestCertificates;
  metrics: RuntimeMetrics;
  http: Deno.HttpClient;
  post: (path: string, body: unknown) => Promise<Response>;
}

/** Runs a server on a free port with `first`'s certificate until `body` is done. */
async function withServer(
  options: Partial<WebhookServerOptions>,
  body: (running: Running) => Promise<void>,
): Promise<void> {
  const certificates = new TestCertificates();
  certificates.set(first.serving);
  const metrics = new RuntimeMetrics({ processStats: () => ({ residentBytes: 0, cpuSeconds: 0 }) });
  const server = new WebhookServer({
    admission: [VALIDATING],
    conversions: [CONVERSION],
    port: 0,
    certificates,
    client,
    metrics,
    ...options,
  });
  const stop = new AbortController();
  const lines: string[] = [];
  setupLogging({ format: "text", level: "warning", write: (line) => lines.push(line) });
  const running = server.run(stop.signal);
  const http = Deno.createHttpClient({ caCerts: [first.ca, second.ca] });
  try {
    const { port } = await server.listening;
    const url = (path: string) => `https://127.0.0.1:${port}${path}`;
    const post = (path: string, payload: unknown) =>
      fetch(url(path), {
        method: "POST",
        client: http,
        headers: { "content-type": "application/json" },
        body: typeof payload === "string" ? payload : JSON.stringify(payload),
      });
    await body({ url, certificates, metrics, http, post });
  } finally {
    stop.abort();
    await running;
    http.close();
    resetLogging();
  }
}

function admissionReview(request: Record<string, unknown>): unknown {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
      kind: { group: "example.com", version: "v1", kind: "WebApp" },
      resource: { group: "example.com", version: "v1", resource: "webapps" },
      name: "web",
      namespace: "shop",
      operation: "CREATE",
      userInfo: { username: "alice", groups: ["system:authenticated"] },
      oldObject: null,
      dryRun: false,
      options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
      ...request,
    },
  };
}

const OBJECT: KubeObject = {
  apiVersion: "example.com/v1",
  kind: "WebApp",
  metadata: { name: "web", namespace: "shop" },
  spec: {},
};

Deno.test("a denial reaches the API server with its message and the request's uid", async () => {
  await withServer({}, async ({ post }) => {
    const response = await post(
      "/validate/example.com/webapps",
      admissionReview({ object: OBJECT }),
    );
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/json");
    assert.deepEqual(await response.json(), {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: {
        uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
        allowed: false,
        status: { code: 403, message: "spec.image is required", reason: "Forbidden" },
      },
    });
    const ok = await post(
      "/validate/example.com/webapps",
      admissionReview({ object: { ...OBJECT, spec: { image: "nginx" } } }),
    );
    assert.deepEqual((await ok.json()).response, {
      uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
      allowed: true,
    });
  });
});

Deno.test("a default is answered as a base64 JSONPatch that turns the object into the defaulted one", async () => {
  await withServer({}, async ({ post }) => {
    const response = await post("/mutate/example.com/webapps", admissionReview({ object: OBJECT }));
    const { response: answer } = await response.json();
    assert.equal(answer.allowed, true);
    assert.equal(answer.patchType, "JSONPatch");
    const patch = JSON.parse(new TextDecoder().decode(Uint8Array.fromBase64(answer.patch)));
    assert.deepEqual(jsonPatch(OBJECT, patch as Operation[]), {
      ...OBJECT,
      metadata: { ...OBJECT.metadata, labels: { "app.kubernetes.io/name": "web" } },
      spec: { replicas: 1 },
    });
  });
});

Deno.test("a malformed review is a 400 that says what is wrong", async () => {
  await withServer({}, async ({ post }) => {
    const cases: [unknown, RegExp][] = [
      ["{not json", /the request body is not JSON/],
      ["", /the request has no body/],
      [
        { apiVersion: "admission.k8s.io/v1beta1", kind: "AdmissionReview", request: {} },
        /expected kind AdmissionReview of apiVersion admission.k8s.io\/v1/,
      ],
      [{ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }, /has no request/],
      [admissionReview({ uid: 7 }), /request.uid must be a non-empty string/],
      [
        admissionReview({ operation: "PATCH" }),
        /request.operation must be one of CREATE, UPDATE, DELETE/,
      ],
      [admissionReview({ object: [1] }), /request.object must be an object/],
    ];
    for (const [body, message] of cases) {
      const response = await post("/validate/example.com/webapps", body);
      assert.equal(response.status, 400, String(body));
      assert.match(await response.text(), message);
    }
    const conversion = await post("/convert/example.com/webapps", {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "ConversionReview",
      request: { uid: "1", desiredAPIVersion: "example.com/v1", objects: "none" },
    });
    assert.equal(conversion.status, 400);
    assert.match(await conversion.text(), /request.objects must be a list of objects/);
  });
});

Deno.test("a body over 7 MiB is refused with 400 and a message, declared or streamed", async () => {
  await withServer({}, async ({ url, http }) => {
    const big = new Uint8Array(7 * 1024 * 1024 + 1).fill(0x20);
    const declared = await fetch(url("/validate/example.com/webapps"), {
      method: "POST",
      client: http,
      body: big,
    });
    assert.equal(declared.status, 400);
    assert.match(await declared.text(), /exceeds the limit of 7340032 bytes/);
    const chunks = 8;
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < chunks) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const streamed = await fetch(url("/validate/example.com/webapps"), {
      method: "POST",
      client: http,
      body: stream,
    });
    assert.equal(streamed.status, 400);
    assert.match(await streamed.text(), /exceeds the limit/);
  });
});

Deno.test("an unknown path is a 404 and a GET a 405", async () => {
  await withServer({}, async ({ url, http, post }) => {
    const missing = await post("/validate/example.com/other", admissionReview({}));
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /no webhook is served at \/validate\/example.com\/other/);
    const get = await fetch(url("/validate/example.com/webapps"), { client: http });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get("allow"), "POST");
    await get.body?.cancel();
  });
});

Deno.test("a handler that throws is denied under Fail saying so, allowed under Ignore", async () => {
  const throwing = (failurePolicy: "Fail" | "Ignore"): AdmissionWebhook => ({
    resource: WEBAPPS,
    failurePolicy,
    validate: () => {
      throw new Error("the registry is down");
    },
  });
  await withServer({ admission: [throwing("Fail")], conversions: [] }, async ({ post }) => {
    const { response } = await (await post(
      "/validate/example.com/webapps",
      admissionReview({ object: OBJECT }),
    )).json();
    assert.equal(response.allowed, false);
    assert.deepEqual(response.status, {
      code: 500,
      reason: "InternalError",
      message: "validation of WebApp shop/web failed: the handler failed: the registry is down",
    });
  });
  await withServer({ admission: [throwing("Ignore")], conversions: [] }, async ({ post }) => {
    const { response } = await (await post(
      "/validate/example.com/webapps",
      admissionReview({ object: OBJECT }),
    )).json();
    assert.equal(response.allowed, true);
  });
});

Deno.test("a handler past its time is denied under Fail saying so, allowed under Ignore", async () => {
  const slow = (failurePolicy: "Fail" | "Ignore"): AdmissionWebhook => ({
    resource: WEBAPPS,
    failurePolicy,
    handlerTimeoutMs: 50,
    validate: (_, { signal }) =>
      new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
  });
  for (const policy of ["Fail", "Ignore"] as const) {
    await withServer({ admission: [slow(policy)], conversions: [] }, async ({ post }) => {
      const { response } = await (await post(
        "/validate/example.com/webapps",
        admissionReview({ object: OBJECT }),
      )).json();
      if (policy === "Ignore") assert.equal(response.allowed, true);
      else {
        assert.equal(response.allowed, false);
        assert.equal(response.status.code, 504);
        assert.equal(
          response.status.message,
          "validation of WebApp shop/web failed: the handler did not answer within 50 ms",
        );
      }
    });
  }
});

function conversionReview(desiredAPIVersion: string, objects: KubeObject[]): unknown {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: { uid: "c1", desiredAPIVersion, objects },
  };
}

Deno.test("a ConversionReview converts both ways and keeps metadata", async () => {
  const metadata = {
    name: "web",
    namespace: "shop",
    uid: "x1",
    resourceVersion: "7",
    labels: { a: "b" },
  };
  const v1 = { apiVersion: "example.com/v1", kind: "WebApp", metadata, spec: { size: 3 } };
  await withServer({}, async ({ post }) => {
    const up =
      await (await post("/convert/example.com/webapps", conversionReview("example.com/v2", [v1])))
        .json();
    assert.deepEqual(up, {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "ConversionReview",
      response: {
        uid: "c1",
        convertedObjects: [{ ...v1, apiVersion: "example.com/v2", spec: { replicas: 3 } }],
        result: { status: "Success" },
      },
    });
    const down = await (await post(
      "/convert/example.com/webapps",
      conversionReview("example.com/v1", up.response.convertedObjects),
    )).json();
    assert.deepEqual(down.response.convertedObjects, [v1]);
    const unknown = await (await post(
      "/convert/example.com/webapps",
      conversionReview("example.com/v7", [v1]),
    )).json();
    assert.equal(unknown.response.result.status, "Failure");
    assert.match(unknown.response.result.message, /names no version of WebApp/);
    assert.deepEqual(unknown.response.convertedObjects, []);
  });
});

Deno.test("the server waits for its first certificate before it listens", async () => {
  const certificates = new TestCertificates();
  const server = new WebhookServer({ admission: [VALIDATING], port: 0, certificates, client });
  const stop = new AbortController();
  const running = server.run(stop.signal);
  let listened = false;
  server.listening.then(() => (listened = true));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(listened, false);
  certificates.set(first.serving);
  const { hostname, port } = await server.listening;
  assert.equal(hostname, "127.0.0.1");
  assert.ok(port > 0);
  stop.abort();
  await running;
});

Deno.test("a port in use rejects both run and listening, leaving nothing open", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const certificates = new TestCertificates();
    certificates.set(first.serving);
    const server = new WebhookServer({
      admission: [VALIDATING],
      port: taken.addr.port,
      certificates,
      client,
    });
    await assert.rejects(server.run(new AbortController().signal), Deno.errors.AddrInUse);
    await assert.rejects(server.listening, Deno.errors.AddrInUse);
  } finally {
    taken.close();
  }
});

Deno.test("stopped before any certificate, the server resolves without listening", async () => {
  const server = new WebhookServer({
    admission: [VALIDATING],
    port: 0,
    certificates: new TestCertificates(),
    client,
  });
  const stop = new AbortController();
  const running = server.run(stop.signal);
  stop.abort();
  await running;
  await assert.rejects(server.listening, /stopped before a certificate came/);
});

Deno.test("a certificate swap keeps answering: requests in a loop while swapping, none fails", async () => {
  await withServer({}, async ({ url, certificates, post }) => {
    let stopLoop = false;
    const failures: unknown[] = [];
    let answered = 0;
    const loop = async () => {
      while (!stopLoop) {
        try {
          const response = await post(
            "/validate/example.com/webapps",
            admissionReview({ object: OBJECT }),
          );
          const { response: answer } = await response.json();
          if (response.status !== 200 || answer.allowed !== false) failures.push(response.status);
          answered++;
        } catch (error) {
          failures.push(error);
        }
      }
    };
    const loops = [loop(), loop(), loop()];
    for (const pki of [second, first, second]) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      certificates.set(pki.serving);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    stopLoop = true;
    await Promise.all(loops);
    assert.deepEqual(failures, []);
    assert.ok(answered > 10, `only ${answered} requests were answered`);

    // The new certificate is the one served: a client that trusts only its CA gets through.
    const onlySecond = Deno.createHttpClient({ caCerts: [second.ca] });
    try {
      const response = await fetch(url("/validate/example.com/webapps"), {
        method: "POST",
        client: onlySecond,
        body: JSON.stringify(admissionReview({ object: OBJECT })),
      });
      assert.equal(response.status, 200);
      await response.body?.cancel();
    } finally {
      onlySecond.close();
    }
  });
});

Deno.test("the webhook metrics carry controller-runtime's names, per path and code", async () => {
  const throwing: AdmissionWebhook = {
    resource: WEBAPPS,
    validate: () => {
      throw new Error("boom");
    },
  };
  await withServer({ admission: [throwing] }, async ({ post, metrics }) => {
    await (await post("/validate/example.com/webapps", admissionReview({ object: OBJECT }))).json();
    await (await post("/validate/example.com/webapps", "{")).text();
    const text = metrics.render();
    const path = "/validate/example.com/webapps";
    for (
      const line of [
        `controller_runtime_webhook_requests_total{webhook="${path}",code="200"} 1`,
        `controller_runtime_webhook_requests_total{webhook="${path}",code="400"} 1`,
        `controller_runtime_webhook_latency_seconds_count{webhook="${path}"} 2`,
        `controller_runtime_webhook_requests_in_flight{webhook="${path}"} 0`,
        `controller_runtime_webhook_requests_in_flight{webhook="/convert/example.com/webapps"} 0`,
        `kinglet_webhook_handler_failures_total{webhook="${path}",reason="error"} 1`,
        `kinglet_webhook_handler_failures_total{webhook="${path}",reason="timeout"} 0`,
      ]
    ) {
      assert.ok(text.includes(line), `missing: ${line}`);
    }
    assert.match(text, /# TYPE controller_runtime_webhook_latency_seconds histogram/);
  });
});

Deno.test("misuse is refused at once, naming the option", () => {
  const certificates = new TestCertificates();
  assert.throws(
    () => new WebhookServer({ admission: [VALIDATING], port: 70000, certificates, client }),
    new RangeError(
      "Cannot start the webhook server: 'port' must be an integer from 0 to 65535, got 70000",
    ),
  );
  assert.throws(
    () =>
      new WebhookServer({
        admission: [{ ...VALIDATING, timeoutSeconds: 0 }],
        certificates,
        client,
      }),
    /'timeoutSeconds' must be an integer from 1 to 30, got 0/,
  );
  assert.throws(
    () => new WebhookServer({ certificates, client }),
    /'admission' and 'conversions' declare no handler/,
  );
  assert.throws(
    () => new WebhookServer({ admission: [VALIDATING, VALIDATING], certificates, client }),
    /two entries serve \/validate\/example.com\/webapps/,
  );
  const conversions: Conversion[] = [CONVERSION, CONVERSION];
  assert.throws(() => new WebhookServer({ conversions, certificates, client }), TypeError);
});

Deno.test("paths follow webhookPaths for each handler declared", () => {
  const server = new WebhookServer({
    admission: [VALIDATING],
    conversions: [CONVERSION],
    certificates: new TestCertificates(),
    client,
  });
  assert.deepEqual(server.paths, [
    "/validate/example.com/webapps",
    "/mutate/example.com/webapps",
    "/convert/example.com/webapps",
  ]);
});
