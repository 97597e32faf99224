import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { integer, octetString, oid, time } from "../../lib/x509/_der.ts";
import { readTlv } from "../../lib/x509/_der_read.ts";
import {
  canonicalIpAddress,
  certificateValidity,
  createCertificateAuthority,
  inspectCertificate,
  issueCertificate,
  issueServingCertificate,
  pemDecode,
  pemEncode,
  splitCertificates,
  verifyIssuedBy,
} from "../../lib/x509/mod.ts";

const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const DAY = 86_400_000;

Deno.test("DER integers stay positive and minimal, lengths past 127 take the long form", () => {
  assert.equal(hex(integer(new Uint8Array([0, 0, 0x7f]))), "02017f");
  assert.equal(hex(integer(new Uint8Array([0x80]))), "02020080");
  assert.equal(hex(integer(new Uint8Array([0, 0]))), "020100");
  assert.equal(hex(octetString(new Uint8Array(200)).subarray(0, 3)), "0481c8");
  assert.equal(hex(octetString(new Uint8Array(300)).subarray(0, 4)), "0482012c");
});

Deno.test("DER object identifiers encode arcs past 127 in base 128", () => {
  assert.equal(hex(oid("1.2.840.10045.4.3.2")), "06082a8648ce3d040302");
  assert.equal(hex(oid("2.5.29.19")), "0603551d13");
});

Deno.test("certificate times are UTCTime before 2050 and GeneralizedTime from then on", () => {
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes.subarray(2));
  assert.equal(time(new Date("2036-01-02T03:04:05Z"))[0], 0x17);
  assert.equal(text(time(new Date("2036-01-02T03:04:05Z"))), "360102030405Z");
  assert.equal(time(new Date("2050-01-02T03:04:05Z"))[0], 0x18);
  assert.equal(text(time(new Date("2050-01-02T03:04:05Z"))), "20500102030405Z");
});

Deno.test("DER reading reads back what was written, long lengths included, and refuses a cut", () => {
  const long = octetString(new Uint8Array(300));
  assert.equal(readTlv(long).value.length, 300);
  assert.throws(() => readTlv(long.subarray(0, 100)), TypeError);
});

Deno.test("IP addresses take one canonical form, and what is not one is refused", () => {
  assert.equal(canonicalIpAddress("10.0.0.1"), "10.0.0.1");
  assert.equal(canonicalIpAddress("::"), "::");
  assert.equal(canonicalIpAddress("2001:DB8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
  assert.equal(canonicalIpAddress("fe80::"), "fe80::");
  assert.equal(canonicalIpAddress("1:2:3:4:5:6:7:8"), "1:2:3:4:5:6:7:8");
  for (const bad of ["256.0.0.1", "1::2::3", "1:2:3:4:5:6:7", "localhost", "1:2:3:4:5:6:7:8:9"]) {
    assert.throws(() => canonicalIpAddress(bad), RangeError, bad);
  }
});

Deno.test("PEM round-trips, a bundle splits into its certificates, other labels are passed over", () => {
  const one = pemEncode("CERTIFICATE", new Uint8Array(100).fill(7));
  const key = pemEncode("PRIVATE KEY", new Uint8Array([1]));
  assert.ok(one.split("\n").every((line) => line.length <= 64));
  assert.deepEqual(pemDecode(`junk\n${one}${key}${one}`).length, 2);
  assert.deepEqual(splitCertificates(`${one}\n${key}${one}`), [one, one]);
  assert.deepEqual(pemDecode(key, "PRIVATE KEY"), [new Uint8Array([1])]);
});

Deno.test("a serving certificate names its DNS and IP addresses, and is valid for its lifetime", async () => {
  const now = Date.UTC(2031, 5, 1, 12, 0, 0);
  const ca = await createCertificateAuthority({
    commonName: "test-ca",
    now,
    lifetimeMs: 100 * DAY,
  });
  const serving = await issueServingCertificate(ca, {
    dnsNames: ["hook.ops.svc", "hook.ops.svc.cluster.local"],
    ipAddresses: ["127.0.0.1", "::1"],
    now,
    lifetimeMs: 10 * DAY,
    backdateMs: 60_000,
  });
  const info = inspectCertificate(serving.cert);
  assert.deepEqual(info, {
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 10 * DAY),
    commonName: "hook.ops.svc",
    isAuthority: false,
    dnsNames: ["hook.ops.svc", "hook.ops.svc.cluster.local"],
    ipAddresses: ["127.0.0.1", "::1"],
  });
  assert.equal(inspectCertificate(ca.cert).isAuthority, true);
  assert.equal(inspectCertificate(ca.cert).commonName, "test-ca");
  const node = new X509Certificate(serving.cert);
  assert.ok(node.verify(new X509Certificate(ca.cert).publicKey));
  assert.ok(node.checkHost("hook.ops.svc") && node.checkIP("127.0.0.1") && node.checkIP("::1"));
  assert.equal(Date.parse(node.validTo), now + 10 * DAY);
});

Deno.test("an issued certificate never outlives its CA", async () => {
  const now = Date.UTC(2031, 0, 1);
  const ca = await createCertificateAuthority({ now, lifetimeMs: 5 * DAY });
  const leaf = await issueServingCertificate(ca, { dnsNames: ["a"], now, lifetimeMs: 50 * DAY });
  assert.deepEqual(certificateValidity(leaf.cert).notAfter, certificateValidity(ca.cert).notAfter);
});

Deno.test("the CA's signature verifies, another CA's does not, and a leaf cannot issue", async () => {
  const [ca, other] = await Promise.all([
    createCertificateAuthority(),
    createCertificateAuthority(),
  ]);
  const leaf = await issueCertificate(ca, {
    subject: { commonName: "admin", organizations: ["system:masters"] },
    usage: "clientAuth",
  });
  assert.equal(await verifyIssuedBy(leaf.cert, ca.cert), true);
  assert.equal(await verifyIssuedBy(ca.cert, ca.cert), true);
  assert.equal(await verifyIssuedBy(leaf.cert, other.cert), false);
  assert.equal(new X509Certificate(leaf.cert).subject, "O=system:masters\nCN=admin");
  await assert.rejects(
    issueServingCertificate(leaf, { dnsNames: ["x"] }),
    (e: unknown) => e instanceof TypeError && /'ca' is not a certificate authority/.test(e.message),
  );
});

Deno.test("misuse is refused at once, naming the option and the value", async () => {
  const ca = await createCertificateAuthority();
  await assert.rejects(issueServingCertificate(ca, {}), /'dnsNames' and 'ipAddresses'/);
  await assert.rejects(
    issueServingCertificate(ca, { ipAddresses: ["300.1.1.1"] }),
    (e: unknown) => e instanceof RangeError && /'ipAddresses' holds "300\.1\.1\.1"/.test(e.message),
  );
  await assert.rejects(
    issueServingCertificate(ca, { dnsNames: ["bad name"] }),
    /'dnsNames' holds "bad name"/,
  );
  await assert.rejects(
    createCertificateAuthority({ lifetimeMs: 0 }),
    (e: unknown) => e instanceof RangeError && /'lifetimeMs' must be a positive/.test(e.message),
  );
  assert.throws(() => certificateValidity("no pem here"), TypeError);
});
