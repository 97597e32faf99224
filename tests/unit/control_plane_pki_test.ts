import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { join } from "node:path";
import { NOT_BLOCK_YAML, readBlockYaml } from "../../lib/kube/_block_yaml.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { oid } from "../../lib/x509/_der.ts";
import { writeKubeconfig } from "../../lib/testing/control_plane/_kubeconfig.ts";
import { generatePki, type Pki } from "../../lib/testing/control_plane/mod.ts";

const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

async function withPki(body: (pki: Pki, dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_pki_" });
  try {
    const pki = await generatePki(dir, {
      admin: { commonName: "kinglet-admin", organizations: ["system:masters"] },
      "kube-scheduler": { commonName: "system:kube-scheduler" },
    });
    await body(pki, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const certificate = async (path: string) => new X509Certificate(await Deno.readTextFile(path));

/** Whether the certificate names TLS server or client authentication (node:crypto does not say). */
function extendedUsages(cert: X509Certificate): { serverAuth: boolean; clientAuth: boolean } {
  const raw = hex(cert.raw);
  return {
    serverAuth: raw.includes(hex(oid("1.3.6.1.5.5.7.3.1"))),
    clientAuth: raw.includes(hex(oid("1.3.6.1.5.5.7.3.2"))),
  };
}

Deno.test("the CA signs the serving and client certificates, all v3 with the usages Kubernetes checks", async () => {
  await withPki(async (pki) => {
    const ca = await certificate(pki.ca.cert);
    assert.equal(ca.ca, true);
    assert.equal(ca.subject, "CN=kinglet-local-ca");
    assert.ok(ca.verify(ca.publicKey), "the CA is self-signed");

    const serving = await certificate(pki.serving.cert);
    assert.equal(serving.ca, false);
    assert.ok(serving.checkIssued(ca) && serving.verify(ca.publicKey), "the CA signed it");
    assert.ok(serving.checkIP("127.0.0.1"), String(serving.subjectAltName));
    assert.ok(serving.checkHost("kubernetes.default.svc"), String(serving.subjectAltName));
    assert.deepEqual(ca.keyUsage, ["DigitalSignature", "KeyCertSign", "CRLSign"]);
    assert.deepEqual(serving.keyUsage, ["DigitalSignature"]);
    assert.ok(extendedUsages(serving).serverAuth && !extendedUsages(serving).clientAuth);

    const admin = await certificate(pki.clients["admin"]!.cert);
    assert.ok(admin.verify(ca.publicKey), "the CA signed the admin certificate");
    assert.equal(admin.subject, "O=system:masters\nCN=kinglet-admin");
    assert.ok(extendedUsages(admin).clientAuth && !extendedUsages(admin).serverAuth);
    const scheduler = await certificate(pki.clients["kube-scheduler"]!.cert);
    assert.equal(scheduler.subject, "CN=system:kube-scheduler");
    assert.ok(Date.parse(admin.validTo) > Date.now() + 9 * 365 * 86_400_000, admin.validTo);
    assert.ok(Date.parse(admin.validFrom) < Date.now(), admin.validFrom);
  });
});

Deno.test("private keys are readable by their owner only, the service-account keys are RSA", async () => {
  await withPki(async (pki) => {
    for (const key of [pki.ca.key, pki.serving.key, pki.serviceAccount.privateKey]) {
      assert.equal((await Deno.stat(key)).mode! & 0o777, 0o600, key);
    }
    const publicKey = await Deno.readTextFile(pki.serviceAccount.publicKey);
    assert.match(publicKey, /^-----BEGIN PUBLIC KEY-----\n/);
    const der = Uint8Array.from(
      atob(publicKey.split("\n").slice(1, -2).join("")),
      (c) => c.charCodeAt(0),
    );
    const imported = await crypto.subtle.importKey(
      "spki",
      der,
      { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
      true,
      ["verify"],
    );
    assert.equal((imported.algorithm as RsaHashedKeyAlgorithm).modulusLength, 2048);
  });
});

Deno.test("Deno's TLS stack accepts the serving certificate against the CA", async () => {
  await withPki(async (pki) => {
    const read = (path: string) => Deno.readTextFile(path);
    const server = Deno.serve(
      {
        hostname: "127.0.0.1",
        port: 0,
        cert: await read(pki.serving.cert),
        key: await read(pki.serving.key),
        onListen: () => {},
      },
      () => new Response("served"),
    );
    const client = Deno.createHttpClient({
      caCerts: [await read(pki.ca.cert)],
      cert: await read(pki.clients["admin"]!.cert),
      key: await read(pki.clients["admin"]!.key),
    });
    try {
      const response = await fetch(`https://127.0.0.1:${server.addr.port}/`, { client });
      assert.equal(await response.text(), "served");
    } finally {
      client.close();
      await server.shutdown();
    }
  });
});

Deno.test("a written kubeconfig is block YAML the client reads without a YAML library", async () => {
  await withPki(async (pki, dir) => {
    const path = join(dir, "admin.kubeconfig");
    const admin = pki.clients["admin"]!;
    await writeKubeconfig(path, {
      server: "https://127.0.0.1:6443",
      user: "admin",
      ca: pki.ca.cert,
      ...admin,
    });
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.notEqual(readBlockYaml(await Deno.readTextFile(path)), NOT_BLOCK_YAML);
    const config = await loadConfig({ kubeconfig: path, env: {} });
    assert.equal(config.server, "https://127.0.0.1:6443");
    assert.equal(config.clientCert, await Deno.readTextFile(admin.cert));
    assert.equal(config.clientKey, await Deno.readTextFile(admin.key));
    assert.equal(config.caCert, await Deno.readTextFile(pki.ca.cert));
  });
});
