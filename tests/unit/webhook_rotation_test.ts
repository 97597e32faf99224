import assert from "node:assert/strict";
import { type RotationPolicy, rotationStep } from "../../lib/runtime/webhook/_rotation.ts";
import {
  createCertificateAuthority,
  issueServingCertificate,
  splitCertificates,
  verifyIssuedBy,
} from "../../lib/x509/mod.ts";

const NOW = Date.UTC(2031, 0, 1);
const POLICY: RotationPolicy = {
  caName: "test-ca",
  caLifetimeMs: 900_000,
  servingLifetimeMs: 300_000,
  settleMs: 10_000,
  dnsNames: ["hook.ops.svc"],
  ipAddresses: [],
};

async function stored(options: { dnsNames?: string[] } = {}) {
  const ca = await createCertificateAuthority({ now: NOW, lifetimeMs: 900_000, backdateMs: 0 });
  const serving = await issueServingCertificate(ca, {
    dnsNames: options.dnsNames ?? ["hook.ops.svc"],
    now: NOW,
    lifetimeMs: 300_000,
    backdateMs: 0,
  });
  return { caBundle: ca.cert, ca, serving };
}

Deno.test("nothing stored: a CA and a serving certificate from it, in a bundle of that CA", async () => {
  const { next, reason } = await rotationStep(undefined, NOW, undefined, POLICY);
  assert.equal(reason, "none stored");
  assert.deepEqual(splitCertificates(next!.caBundle), [next!.ca.cert]);
  assert.ok(await verifyIssuedBy(next!.serving.cert, next!.ca.cert));
});

Deno.test("certificates with time left stand, and the step says when the serving one falls due", async () => {
  const current = await stored();
  const step = await rotationStep(current, NOW + 1000, NOW, POLICY);
  assert.deepEqual(step, { wakeAt: NOW + 200_000 });
});

Deno.test("a serving certificate due waits for the settle time after the bundle reached the API server", async () => {
  const current = await stored();
  const due = NOW + 200_000;
  assert.equal((await rotationStep(current, due, undefined, POLICY)).next, undefined);
  const waiting = await rotationStep(current, due, due - 4_000, POLICY);
  assert.deepEqual(waiting, { wakeAt: due + 6_000 });
  const renewed = await rotationStep(current, due + 6_000, due - 4_000, POLICY);
  assert.equal(renewed.reason, "the serving certificate is two thirds through its life");
  assert.notEqual(renewed.next!.serving.cert, current.serving.cert);
  assert.equal(renewed.next!.ca, current.ca);
});

Deno.test("a serving certificate for other names is replaced, one trusted by no CA at once", async () => {
  const renamed = await rotationStep(
    await stored({ dnsNames: ["old.ops.svc"] }),
    NOW,
    NOW - 20_000,
    POLICY,
  );
  assert.equal(renamed.reason, "the serving certificate names other hosts");
  const foreign = await stored();
  const other = await createCertificateAuthority({ now: NOW });
  foreign.serving = await issueServingCertificate(other, { dnsNames: ["hook.ops.svc"], now: NOW });
  const step = await rotationStep(foreign, NOW, undefined, POLICY);
  assert.equal(step.reason, "the serving certificate is trusted by no CA of the bundle");
});

Deno.test("the CA at two thirds of its life: a new CA joins the bundle, the serving certificate stays", async () => {
  const current = await stored();
  current.serving = await issueServingCertificate(current.ca, {
    dnsNames: ["hook.ops.svc"],
    now: NOW + 500_000,
    lifetimeMs: 300_000,
  });
  const step = await rotationStep(current, NOW + 600_000, NOW, POLICY);
  assert.equal(step.reason, "the CA is two thirds through its life");
  assert.deepEqual(splitCertificates(step.next!.caBundle), [current.ca.cert, step.next!.ca.cert]);
  assert.equal(step.next!.serving, current.serving, "it waits for the new bundle to settle");
});

Deno.test("an expired CA leaves the bundle, and unreadable certificates are made anew", async () => {
  const current = await stored();
  const next = await rotationStep(current, NOW + 600_000, NOW, POLICY);
  const later = await rotationStep(next.next!, NOW + 900_001, NOW + 600_000, POLICY);
  assert.equal(splitCertificates(later.next!.caBundle).length, 1);
  const broken = { ...current, serving: { cert: "not a certificate", key: "" } };
  const fresh = await rotationStep(broken, NOW, undefined, POLICY);
  assert.match(fresh.reason!, /^the stored certificates are unusable/);
});
