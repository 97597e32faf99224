import assert from "node:assert/strict";
import { ConfigError } from "../../lib/kube/errors.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { FakeClock } from "../../lib/async/clock.ts";

Deno.test.sanitizer({ ops: true, resources: true });

const CA = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
const ENV = { KUBERNETES_SERVICE_HOST: "10.43.0.1", KUBERNETES_SERVICE_PORT: "443" };

/** A temp dir standing in for /var/run/secrets/kubernetes.io/serviceaccount. */
async function serviceAccountDir(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_sa_" });
  for (const [name, content] of Object.entries(files)) {
    await Deno.writeTextFile(`${dir}/${name}`, content);
  }
  return dir;
}

Deno.test("in-cluster config reads the service account folder and the service env", async () => {
  const dir = await serviceAccountDir({
    "ca.crt": CA,
    token: "sa-token\n",
    namespace: "kinglet-system",
  });
  try {
    const config = await loadConfig({ env: ENV, serviceAccountDir: dir });
    assert.equal(config.server, "https://10.43.0.1:443");
    assert.equal(config.caCert, CA);
    assert.equal(config.namespace, "kinglet-system");
    assert.equal(config.source, "in-cluster");
    assert.equal(await config.auth.token(), "sa-token");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("in-cluster config brackets an IPv6 service host and defaults the namespace", async () => {
  const dir = await serviceAccountDir({ "ca.crt": CA, token: "t" });
  try {
    const env = { KUBERNETES_SERVICE_HOST: "fd00:10:96::1", KUBERNETES_SERVICE_PORT: "6443" };
    const config = await loadConfig({ env, serviceAccountDir: dir });
    assert.equal(config.server, "https://[fd00:10:96::1]:6443");
    assert.equal(config.namespace, "default");
    const withPodNamespace = await loadConfig({
      env: { ...env, POD_NAMESPACE: "ops" },
      serviceAccountDir: dir,
    });
    assert.equal(withPodNamespace.namespace, "ops");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("in-cluster token is re-read when rotated: after a minute, or at once after invalidate", async () => {
  const dir = await serviceAccountDir({ "ca.crt": CA, token: "first" });
  try {
    const clock = new FakeClock(1_000_000);
    const config = await loadConfig({ env: ENV, serviceAccountDir: dir, clock });
    assert.equal(await config.auth.token(), "first");
    await Deno.writeTextFile(`${dir}/token`, "second");
    await clock.advance(30_000);
    assert.equal(await config.auth.token(), "first", "cached within the minute");
    await clock.advance(30_000);
    assert.equal(await config.auth.token(), "second");
    await Deno.writeTextFile(`${dir}/token`, "third");
    config.auth.invalidate();
    assert.equal(await config.auth.token(), "third");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("in-cluster config without a mounted token or CA says what to mount", async () => {
  const noToken = await serviceAccountDir({ "ca.crt": CA });
  const noCa = await serviceAccountDir({ token: "t" });
  try {
    const missingToken = await loadConfig({ env: ENV, serviceAccountDir: noToken }).catch((e) => e);
    assert.ok(missingToken instanceof ConfigError);
    assert.match(missingToken.message, /Cannot read the service account token .*\/token/);
    const missingCa = await loadConfig({ env: ENV, serviceAccountDir: noCa }).catch((e) => e);
    assert.ok(missingCa instanceof ConfigError);
    assert.match(
      missingCa.message,
      /Cannot read the service account CA certificate .*ca\.crt: .*automountServiceAccountToken/,
    );
  } finally {
    await Deno.remove(noToken, { recursive: true });
    await Deno.remove(noCa, { recursive: true });
  }
});

Deno.test("in-cluster config without KUBERNETES_SERVICE_PORT is an error", async () => {
  const err = await loadConfig({
    env: { KUBERNETES_SERVICE_HOST: "10.0.0.1" },
    serviceAccountDir: "/nope",
  })
    .catch((e) => e);
  assert.ok(err instanceof ConfigError);
  assert.match(err.message, /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set/);
});
