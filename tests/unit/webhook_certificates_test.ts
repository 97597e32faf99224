import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { type Clock, FakeClock } from "../../lib/async/clock.ts";
import { type KubeObject, type Resource, SECRETS } from "../../lib/kube/mod.ts";
import { caBundleInjector } from "../../lib/runtime/webhook/ca_bundle.ts";
import { SecretCertificateStore } from "../../lib/runtime/webhook/cert_store.ts";
import {
  CertificateKeeper,
  type CertificateKeeperOptions,
} from "../../lib/runtime/webhook/certificates.ts";
import type { ServingCertificate } from "../../lib/runtime/webhook/certificate_source.ts";
import { MemoryCluster } from "../../lib/testing/memory_cluster.ts";
import { waitFor } from "../../lib/testing/wait_for.ts";
import {
  certificateValidity,
  inspectCertificate,
  splitCertificates,
  verifyIssuedBy,
} from "../../lib/x509/mod.ts";

const VALIDATING: Resource = {
  group: "admissionregistration.k8s.io",
  version: "v1",
  plural: "validatingwebhookconfigurations",
  kind: "ValidatingWebhookConfiguration",
  namespaced: false,
};

interface Configuration extends KubeObject {
  webhooks: { name: string; clientConfig: { url?: string; caBundle?: string } }[];
}

/**
 * A clock the test moves by hand, for walks of hundreds of steps that call
 * `step` themselves: nothing sleeps on it, and moving it costs nothing
 * (a `FakeClock`'s advance lets macrotasks run, some 20 ms a move).
 */
class HandClock implements Clock {
  constructor(public at: number) {}
  now(): number {
    return this.at;
  }
  sleep(): Promise<void> {
    return Promise.reject(new Error("nothing sleeps on a hand clock"));
  }
}

/** A cluster with the operator's namespace and a configuration the keeper injects into. */
function setup(clock: Clock, options: Partial<CertificateKeeperOptions> = {}) {
  const cluster = new MemoryCluster({ namespaces: ["ops"], clock });
  cluster.put<Configuration>(VALIDATING, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "demo-validating" },
    webhooks: [{ name: "vwidgets.x", clientConfig: { url: "https://127.0.0.1:9443/v" } }],
  });
  const keeper = (store = options.store) =>
    new CertificateKeeper({
      store: store ?? new SecretCertificateStore(cluster, {
        namespace: "ops",
        name: "demo-webhook-tls",
        operator: "demo",
      }),
      dnsNames: ["demo-webhook.ops.svc", "localhost"],
      ipAddresses: ["127.0.0.1"],
      inject: caBundleInjector(cluster, {
        validating: { name: "demo-validating", webhooks: ["vwidgets.x"] },
      }),
      clock,
      ...options,
    });
  /** The bundle the API server would trust now: what the configuration holds. */
  const inForce = () => {
    const entry = cluster.object<Configuration>(VALIDATING, "demo-validating")!.webhooks[0]!;
    return entry.clientConfig.caBundle ? atob(entry.clientConfig.caBundle) : "";
  };
  return { cluster, keeper, inForce };
}

async function trustedBy(cert: string, bundle: string): Promise<boolean> {
  for (const ca of splitCertificates(bundle)) if (await verifyIssuedBy(cert, ca)) return true;
  return false;
}

Deno.test("a first step makes a CA and a serving certificate, stores, serves and injects them", async () => {
  const clock = new FakeClock(Date.now());
  const { cluster, keeper, inForce } = setup(clock);
  const one = keeper();
  const heard: ServingCertificate[] = [];
  one.subscribe((certificate) => heard.push(certificate));
  assert.equal(one.current(), undefined);
  await one.step();
  const served = one.current()!;
  assert.deepEqual(heard, [served]);
  assert.equal(inForce(), one.caBundle());
  assert.ok(await trustedBy(served.cert, inForce()));
  const info = inspectCertificate(served.cert);
  assert.deepEqual(info.dnsNames, ["demo-webhook.ops.svc", "localhost"]);
  assert.deepEqual(info.ipAddresses, ["127.0.0.1"]);
  const ca = inspectCertificate(inForce());
  assert.ok(ca.isAuthority && /^kinglet-webhook-ca@\d+$/.test(ca.commonName), ca.commonName);
  assert.equal(cluster.objects(SECRETS).length, 1);
  await one.step();
  assert.equal(heard.length, 1, "a step with nothing due changes nothing");
});

Deno.test("Deno trusts the served certificate by its IP and DNS names, across a CA rotation", async () => {
  // Real TLS checks real time: the fake clock starts in the past, so that after stepping it past
  // the CA's renewal it still reads a moment before now, and every certificate is valid.
  const clock = new FakeClock(Date.now() - 2_500_000);
  const { keeper, inForce } = setup(clock, {
    caLifetimeMs: 3_000_000,
    servingLifetimeMs: 3_000_000,
    settleMs: 10_000,
  });
  const one = keeper();
  await one.step();
  const check = async (served: ServingCertificate, bundle: string) => {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, ...served, onListen: () => {} },
      () => new Response("admitted"),
    );
    const client = Deno.createHttpClient({ caCerts: splitCertificates(bundle) });
    try {
      const response = await fetch(`https://127.0.0.1:${server.addr.port}/`, { client });
      assert.equal(await response.text(), "admitted");
    } finally {
      client.close();
      await server.shutdown();
    }
    const x509 = new X509Certificate(served.cert);
    assert.ok(x509.checkHost("demo-webhook.ops.svc") && x509.checkHost("localhost"));
  };
  const first = one.current()!;
  await check(first, inForce());

  await clock.advance(2_100_000);
  await one.step();
  assert.equal(splitCertificates(inForce()).length, 2, "the new CA joined the bundle");
  assert.equal(one.current(), first, "the serving certificate waits for the bundle to settle");
  await check(first, inForce());

  await clock.advance(10_000);
  await one.step();
  const second = one.current()!;
  assert.notEqual(second.cert, first.cert);
  await check(second, inForce());
  const newest = splitCertificates(inForce())[1]!;
  assert.ok(await verifyIssuedBy(second.cert, newest), "issued by the new CA");
  await check(second, newest);
});

Deno.test("rotating the serving certificate and the CA keeps what is served trusted by the bundle in force at every step", async () => {
  const clock = new HandClock(Date.UTC(2031, 0, 1));
  const settleMs = 5_000;
  const { keeper, inForce } = setup(clock, {
    caLifetimeMs: 90_000,
    servingLifetimeMs: 30_000,
    settleMs,
    refreshMs: 10_000,
  });
  const one = keeper();
  await one.step();
  /** When each CA was first in the bundle in force. */
  const firstInForce = new Map<string, number>();
  const served = new Set<string>();
  const cas = new Set<string>();
  let largestBundle = 0;
  for (let second = 1; second <= 400; second++) {
    clock.at += 1000;
    await one.step();
    const now = clock.now();
    const bundle = splitCertificates(inForce());
    largestBundle = Math.max(largestBundle, bundle.length);
    for (const ca of bundle) {
      if (!firstInForce.has(ca)) firstInForce.set(ca, now);
      cas.add(ca);
      assert.ok(certificateValidity(ca).notAfter.getTime() > now, "an expired CA left the bundle");
    }
    const { cert } = one.current()!;
    const { notBefore, notAfter } = certificateValidity(cert);
    assert.ok(notBefore.getTime() <= now && now < notAfter.getTime(), `valid at ${second} s`);
    const issuer = await Promise.all(bundle.map((ca) => verifyIssuedBy(cert, ca)));
    const index = issuer.indexOf(true);
    assert.ok(index >= 0, `at ${second} s the served certificate is trusted by the bundle`);
    if (!served.has(cert) && served.size > 0) {
      const since = firstInForce.get(bundle[index]!)!;
      assert.ok(now - since >= settleMs, `served from a CA in force for ${now - since} ms only`);
    }
    served.add(cert);
  }
  assert.ok(served.size >= 18, `${served.size} serving certificates in 400 s of 30 s lives`);
  assert.ok(cas.size >= 6, `${cas.size} CAs in 400 s of 90 s lives`);
  assert.equal(largestBundle, 2, "the old CA and the new one, never more");
});

Deno.test("two keepers on one store converge on one certificate, through creation and rotation", async () => {
  const clock = new HandClock(Date.UTC(2031, 0, 1));
  const { cluster, keeper } = setup(clock, {
    caLifetimeMs: 90_000,
    servingLifetimeMs: 30_000,
    settleMs: 2_000,
  });
  const [a, b] = [keeper(), keeper()];
  await Promise.all([a.step(), b.step()]);
  assert.ok(a.current());
  assert.deepEqual(a.current(), b.current());
  assert.equal(a.caBundle(), b.caBundle());
  const certs = new Set([a.current()!.cert]);
  for (let second = 1; second <= 120; second++) {
    clock.at += 1000;
    await Promise.all([a.step(), b.step()]);
    assert.deepEqual(a.current(), b.current(), `at ${second} s`);
    certs.add(a.current()!.cert);
  }
  const stored = (await new SecretCertificateStore(cluster, {
    namespace: "ops",
    name: "demo-webhook-tls",
    operator: "demo",
  }).read())!;
  assert.equal(stored.certificates!.serving.cert, a.current()!.cert);
  // Every write that won made one new serving certificate or CA, and each was served by both.
  const writes = cluster.changes.filter((c) => c.endsWith("secrets ops/demo-webhook-tls")).length;
  assert.ok(certs.size >= 6 && writes <= certs.size * 2 + 1, `${writes} writes, ${certs.size}`);
});

Deno.test("run steps on the clock: the serving certificate is renewed when due, and run ends on abort", async () => {
  const clock = new FakeClock(Date.UTC(2031, 0, 1));
  const { keeper } = setup(clock, { servingLifetimeMs: 30_000, settleMs: 1_000 });
  const one = keeper();
  const stop = new AbortController();
  const running = one.run(stop.signal);
  const first = await waitFor("the first certificate", () => one.current());
  // Past two thirds of 33 s (30 s and a 3 s backdate), with the settle time long gone.
  await clock.advance(20_000);
  await waitFor("a renewed certificate", () => one.current() !== first);
  stop.abort();
  await running;
});

Deno.test("a failed injection is thrown after the certificate is handed out, and the next step injects", async () => {
  const clock = new FakeClock(Date.UTC(2031, 0, 1));
  let refusals = 1;
  const injected: string[] = [];
  const { keeper } = setup(clock, {
    inject: (bundle) => {
      if (refusals-- > 0) return Promise.reject(new Error("forbidden"));
      injected.push(bundle);
      return Promise.resolve();
    },
  });
  const one = keeper();
  await assert.rejects(one.step(), /forbidden/);
  assert.ok(one.current(), "served while the bundle could not be put in place");
  await one.step();
  assert.deepEqual(injected, [one.caBundle()]);
});

Deno.test("a keeper refuses options it cannot keep, naming them", () => {
  const clock = new FakeClock(0);
  const { cluster } = setup(clock);
  const store = new SecretCertificateStore(cluster, {
    namespace: "ops",
    name: "x",
    operator: "demo",
  });
  assert.throws(() => new CertificateKeeper({ store }), /'dnsNames' and 'ipAddresses'/);
  assert.throws(
    () => new CertificateKeeper({ store, ipAddresses: ["127.0.0.256"] }),
    /'ipAddresses' holds "127\.0\.0\.256"/,
  );
  assert.throws(
    () => new CertificateKeeper({ store, dnsNames: ["a"], settleMs: 0 }),
    (e: unknown) => e instanceof RangeError && /'settleMs' must be a positive/.test(e.message),
  );
});
