import assert from "node:assert/strict";
import { type KubeObject, SECRETS } from "../../lib/kube/mod.ts";
import {
  DirectoryCertificateStore,
  SecretCertificateStore,
  type StoredCertificates,
} from "../../lib/runtime/webhook/cert_store.ts";
import { MemoryCluster } from "../../lib/testing/memory_cluster.ts";

const pem = (text: string) =>
  `-----BEGIN CERTIFICATE-----\n${btoa(text)}\n-----END CERTIFICATE-----\n`;
const certificates = (tag: string): StoredCertificates => ({
  caBundle: pem(`bundle ${tag}`),
  ca: { cert: pem(`ca ${tag}`), key: pem(`ca key ${tag}`) },
  serving: { cert: pem(`tls ${tag}`), key: pem(`tls key ${tag}`) },
});

interface Secret extends KubeObject {
  type: string;
  data: Record<string, string>;
}

Deno.test("the Secret store creates a labelled TLS Secret under the names cert-manager uses", async () => {
  const cluster = new MemoryCluster({ namespaces: ["ops"] });
  const store = new SecretCertificateStore(cluster, {
    namespace: "ops",
    name: "demo-webhook-tls",
    operator: "demo",
  });
  assert.equal(await store.read(), undefined);
  const version = await store.write(certificates("a"), undefined);
  assert.ok(version);
  const secret = cluster.object<Secret>(SECRETS, "ops/demo-webhook-tls")!;
  assert.equal(secret.type, "kubernetes.io/tls");
  assert.deepEqual(secret.metadata?.labels, { "app.kubernetes.io/managed-by": "demo" });
  assert.deepEqual(Object.keys(secret.data).sort(), [
    "ca-current.crt",
    "ca.crt",
    "ca.key",
    "tls.crt",
    "tls.key",
  ]);
  assert.equal(atob(secret.data["tls.crt"]!), pem("tls a"));
  assert.deepEqual(await store.read(), { version, certificates: certificates("a") });
});

Deno.test("a Secret write that another writer beat returns undefined and changes nothing", async () => {
  const cluster = new MemoryCluster({ namespaces: ["ops"] });
  const options = { namespace: "ops", name: "demo-webhook-tls", operator: "demo" };
  const [one, two] = [
    new SecretCertificateStore(cluster, options),
    new SecretCertificateStore(cluster, options),
  ];
  const first = await one.write(certificates("a"), undefined);
  assert.equal(await two.write(certificates("b"), undefined), undefined, "a second create loses");
  const read = await two.read();
  const second = await two.write(certificates("b"), read!.version);
  assert.ok(second && second !== first);
  assert.equal(await one.write(certificates("c"), first), undefined, "a stale version loses");
  assert.deepEqual((await one.read())?.certificates, certificates("b"));
});

Deno.test("a replace keeps the Secret's other labels and annotations, and fills a Secret missing keys", async () => {
  const cluster = new MemoryCluster({ namespaces: ["ops"] });
  cluster.put(SECRETS, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: "demo-webhook-tls",
      namespace: "ops",
      labels: { team: "a" },
      annotations: { note: "kept" },
    },
    data: { "tls.crt": btoa(pem("half")) },
  });
  const store = new SecretCertificateStore(cluster, {
    namespace: "ops",
    name: "demo-webhook-tls",
    operator: "demo",
  });
  const record = await store.read();
  assert.ok(
    record && !record.certificates,
    "an incomplete Secret has a version and no certificates",
  );
  assert.ok(await store.write(certificates("a"), record.version));
  const secret = cluster.object<Secret>(SECRETS, "ops/demo-webhook-tls")!;
  assert.deepEqual(secret.metadata?.labels, { team: "a", "app.kubernetes.io/managed-by": "demo" });
  assert.deepEqual(secret.metadata?.annotations, { note: "kept" });
});

Deno.test("the directory store writes five files readable by their owner, and refuses a stale version", async () => {
  const root = await Deno.makeTempDir({ prefix: "kinglet_certs_" });
  try {
    const dir = `${root}/webhook`;
    const store = new DirectoryCertificateStore(dir);
    assert.equal(await store.read(), undefined, "nothing before the directory exists");
    const first = await store.write(certificates("a"), undefined);
    assert.ok(first);
    assert.equal(await store.write(certificates("x"), undefined), undefined);
    for (const file of ["ca.crt", "ca-current.crt", "ca.key", "tls.crt", "tls.key"]) {
      assert.equal((await Deno.stat(`${dir}/${file}`)).mode! & 0o777, 0o600, file);
    }
    assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
    assert.equal(await Deno.readTextFile(`${dir}/tls.key`), pem("tls key a"));
    assert.deepEqual(await store.read(), { version: first, certificates: certificates("a") });
    const second = await store.write(certificates("b"), first);
    assert.ok(second && second !== first);
    assert.equal(await store.write(certificates("c"), first), undefined);
    assert.deepEqual(
      (await new DirectoryCertificateStore(dir).read())?.certificates,
      certificates("b"),
    );
    const names = [...Deno.readDirSync(dir)].map((entry) => entry.name).sort();
    assert.deepEqual(names, [".lock", "ca-current.crt", "ca.crt", "ca.key", "tls.crt", "tls.key"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a store without a name is refused at once", () => {
  const cluster = new MemoryCluster();
  assert.throws(
    () => new SecretCertificateStore(cluster, { namespace: "ops", name: "", operator: "demo" }),
    /'name' must be a name/,
  );
  assert.throws(() => new DirectoryCertificateStore(""), /'dir' is empty/);
});

Deno.test("a Secret store in a namespace that does not exist says so instead of retrying", async () => {
  const cluster = new MemoryCluster({ namespaces: ["ops"] });
  const store = new SecretCertificateStore(cluster, {
    namespace: "missing",
    name: "demo-webhook-tls",
    operator: "demo",
  });
  assert.equal(await store.read(), undefined);
  await assert.rejects(
    store.write(certificates("a"), undefined),
    TypeError,
    "Secret missing/demo-webhook-tls: the namespace missing does not exist; create it",
  );
});
