import assert from "node:assert/strict";
import { ConfigError } from "../../lib/kube/errors.ts";
import { loadConfig, type LoadConfigOptions } from "../../lib/kube/config.ts";
import { resetLogging, setupLogging } from "../../lib/log.ts";
import { FakeClock } from "../../lib/async/clock.ts";

Deno.test.sanitizer({ ops: true, resources: true });

const CA = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
const CERT = "-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n";
const b64 = (s: string) => btoa(s);

const tempDirs: string[] = [];
Deno.test.afterAll(async () => {
  for (const dir of tempDirs) await Deno.remove(dir, { recursive: true });
});

/** Writes files (relative path -> content) under a fresh temp dir and returns its path. */
async function tree(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_kubeconfig_" });
  tempDirs.push(dir);
  for (const [rel, content] of Object.entries(files)) {
    const path = `${dir}/${rel}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, content);
  }
  return dir;
}

/** A load with an empty environment and no home, unless the test says otherwise. */
function load(opts: LoadConfigOptions) {
  return loadConfig({ env: {}, home: "/nonexistent-home", ...opts });
}

async function configError(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => undefined, (e) => e);
  assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
  return err.message;
}

const twoContexts = `
apiVersion: v1
kind: Config
current-context: dev
clusters:
  - name: dev-cluster
    cluster:
      server: https://10.0.0.1:6443/
      certificate-authority-data: ${b64(CA)}
  - name: prod-cluster
    cluster:
      server: https://prod.example:443
users:
  - name: dev-admin
    user:
      client-certificate-data: ${b64(CERT)}
      client-key-data: ${b64(KEY)}
  - name: prod-user
    user:
      token: prod-token
contexts:
  - name: dev
    context: { cluster: dev-cluster, user: dev-admin, namespace: shop }
  - name: prod
    context: { cluster: prod-cluster, user: prod-user }
`;

Deno.test("kubeconfig current-context picks cluster, user and namespace, with data fields decoded", async () => {
  const dir = await tree({ config: twoContexts });
  const config = await load({ kubeconfig: `${dir}/config` });
  assert.equal(config.server, "https://10.0.0.1:6443");
  assert.equal(config.caCert, CA);
  assert.equal(config.clientCert, CERT);
  assert.equal(config.clientKey, KEY);
  assert.equal(config.namespace, "shop");
  assert.equal(config.contextName, "dev");
  assert.equal(config.source, `${dir}/config`);
  assert.equal(await config.auth.token(), undefined);
  assert.equal(config.insecureSkipTLSVerify, undefined);
});

Deno.test("kubeconfig explicit context wins over current-context and namespace defaults to default", async () => {
  const dir = await tree({ config: twoContexts });
  const config = await load({ kubeconfig: `${dir}/config`, context: "prod" });
  assert.equal(config.server, "https://prod.example:443");
  assert.equal(config.namespace, "default");
  assert.equal(await config.auth.token(), "prod-token");
  assert.equal(config.clientCert, undefined);
});

Deno.test("KUBECONFIG merges files: the first to define a name wins and current-context comes from the first that sets it", async () => {
  const dir = await tree({
    "a/config": `
clusters:
  - name: shared
    cluster: { server: https://first.example }
users:
  - name: u
    user: { token: first-token }
contexts:
  - name: only-in-a
    context: { cluster: shared, user: u, namespace: from-a }
`,
    "b/config": `
current-context: only-in-a
clusters:
  - name: shared
    cluster: { server: https://second.example }
  - name: b-cluster
    cluster: { server: https://b.example }
users:
  - name: u
    user: { token: second-token }
contexts:
  - name: only-in-a
    context: { cluster: b-cluster, user: u, namespace: from-b }
  - name: b-context
    context: { cluster: b-cluster, user: u }
current-context-ignored: true
`,
    "c/config": "current-context: b-context\n",
  });
  const env = { KUBECONFIG: `${dir}/a/config:${dir}/missing:${dir}/b/config:${dir}/c/config` };
  const config = await load({ env });
  assert.equal(config.contextName, "only-in-a");
  assert.equal(config.server, "https://first.example");
  assert.equal(config.namespace, "from-a");
  assert.equal(await config.auth.token(), "first-token");
  assert.equal(config.source, `${dir}/a/config:${dir}/b/config:${dir}/c/config`);

  const other = await load({ env, context: "b-context" });
  assert.equal(other.server, "https://b.example");
  assert.equal(await other.auth.token(), "first-token");
});

Deno.test("KUBECONFIG takes current-context from a later file when earlier ones set none", async () => {
  const dir = await tree({
    "a/config": "clusters: [{name: c, cluster: {server: https://a.example}}]\n" +
      "contexts: [{name: x, context: {cluster: c}}, {name: y, context: {cluster: c, namespace: y}}]\n",
    "b/config": "current-context: y\n",
  });
  const config = await load({ env: { KUBECONFIG: `${dir}/a/config:${dir}/b/config` } });
  assert.equal(config.contextName, "y");
  assert.equal(config.namespace, "y");
});

Deno.test("KUBECONFIG with only missing files names them all", async () => {
  const message = await configError(load({ env: { KUBECONFIG: "/nope/a:/nope/b" } }));
  assert.match(message, /None of the kubeconfig files in KUBECONFIG exists: \/nope\/a, \/nope\/b/);
});

Deno.test("kubeconfig paths are relative to the file that holds them", async () => {
  const dir = await tree({
    "main/config": "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n",
    "other/config": `
clusters:
  - name: k
    cluster: { server: https://k.example, certificate-authority: pki/ca.crt }
users:
  - name: u
    user: { client-certificate: ../certs/u.crt, client-key: ../certs/u.key, tokenFile: token }
`,
    "other/pki/ca.crt": CA,
    "certs/u.crt": CERT,
    "certs/u.key": KEY,
    "other/token": "file-token\n",
  });
  const config = await load({ env: { KUBECONFIG: `${dir}/main/config:${dir}/other/config` } });
  assert.equal(config.caCert, CA);
  assert.equal(config.clientCert, CERT);
  assert.equal(config.clientKey, KEY);
  assert.equal(await config.auth.token(), "file-token");
});

Deno.test("tokenFile is re-read after a minute and after invalidate, and wins over token", async () => {
  const dir = await tree({
    config: "current-context: c\n" +
      "clusters: [{name: k, cluster: {server: https://k.example}}]\n" +
      "users: [{name: u, user: {token: literal, tokenFile: tok}}]\n" +
      "contexts: [{name: c, context: {cluster: k, user: u}}]\n",
    tok: "one",
  });
  const clock = new FakeClock(Date.now());
  const config = await load({ kubeconfig: `${dir}/config`, clock });
  assert.equal(await config.auth.token(), "one");
  await Deno.writeTextFile(`${dir}/tok`, "two");
  await clock.advance(59_000);
  assert.equal(await config.auth.token(), "one");
  await clock.advance(1_000);
  assert.equal(await config.auth.token(), "two");
  await Deno.writeTextFile(`${dir}/tok`, "three");
  config.auth.invalidate();
  assert.equal(await config.auth.token(), "three");
  await Deno.remove(`${dir}/tok`);
  config.auth.invalidate();
  assert.equal(await config.auth.token(), "three", "a vanished file keeps the last token");
});

Deno.test("an explicit kubeconfig wins over KUBECONFIG, in-cluster and the home config", async () => {
  const dir = await tree({
    explicit: "current-context: c\nclusters: [{name: k, cluster: {server: https://explicit}}]\n" +
      "contexts: [{name: c, context: {cluster: k}}]\n",
    listed: "current-context: c\nclusters: [{name: k, cluster: {server: https://listed}}]\n" +
      "contexts: [{name: c, context: {cluster: k}}]\n",
    "home/.kube/config":
      "current-context: c\nclusters: [{name: k, cluster: {server: https://home}}]\n" +
      "contexts: [{name: c, context: {cluster: k}}]\n",
  });
  const env = { KUBECONFIG: `${dir}/listed`, KUBERNETES_SERVICE_HOST: "10.0.0.1" };
  const home = `${dir}/home`;
  assert.equal(
    (await load({ env, home, kubeconfig: `${dir}/explicit` })).server,
    "https://explicit",
  );
  assert.equal((await load({ env, home })).server, "https://listed");
  assert.equal((await load({ env: {}, home })).server, "https://home");
  assert.equal((await loadConfig({ env: { HOME: home } })).server, "https://home");
  // Asking for a context rules out the in-cluster config.
  const withContext = await load({
    env: { KUBERNETES_SERVICE_HOST: "10.0.0.1" },
    home,
    context: "c",
  });
  assert.equal(withContext.server, "https://home");
});

Deno.test("no kubeconfig anywhere says where it looked", async () => {
  const message = await configError(load({ home: "/nonexistent-home" }));
  assert.match(
    message,
    /\/nonexistent-home\/\.kube\/config: it does not exist; KUBECONFIG is unset/,
  );
});

Deno.test("an explicit kubeconfig that does not exist is an error", async () => {
  const message = await configError(load({ kubeconfig: "/nope/config" }));
  assert.match(message, /Cannot read kubeconfig \/nope\/config: it does not exist/);
});

Deno.test("an unknown context lists the available ones", async () => {
  const dir = await tree({ config: twoContexts });
  const message = await configError(load({ kubeconfig: `${dir}/config`, context: "x" }));
  assert.equal(message, `Context "x" not found in ${dir}/config; available contexts: dev, prod`);
});

Deno.test("a kubeconfig without current-context asks to choose one", async () => {
  const dir = await tree({ config: twoContexts.replace("current-context: dev", "") });
  const message = await configError(load({ kubeconfig: `${dir}/config` }));
  assert.match(
    message,
    /No current-context is set in .*config; choose a context .*available contexts: dev, prod/,
  );
});

Deno.test("an empty kubeconfig says no contexts are defined", async () => {
  const dir = await tree({ config: "" });
  const message = await configError(load({ kubeconfig: `${dir}/config`, context: "a" }));
  assert.match(message, /Context "a" not found in .*; available contexts: none are defined/);
});

Deno.test("a context naming an unknown cluster or user says which context and what exists", async () => {
  const dir = await tree({
    config: "clusters: [{name: k, cluster: {server: https://k}}]\nusers: [{name: u, user: {}}]\n" +
      "contexts: [{name: c1, context: {cluster: nope, user: u}}, {name: c2, context: {cluster: k, user: who}}," +
      " {name: c3, context: {user: u}}]\n",
  });
  const path = `${dir}/config`;
  assert.equal(
    await configError(load({ kubeconfig: path, context: "c1" })),
    `Cluster "nope" (used by context "c1" in ${path}) not found in ${path}; available clusters: k`,
  );
  assert.equal(
    await configError(load({ kubeconfig: path, context: "c2" })),
    `User "who" (used by context "c2" in ${path}) not found in ${path}; available users: u`,
  );
  assert.match(await configError(load({ kubeconfig: path, context: "c3" })), /it names no cluster/);
});

Deno.test("malformed kubeconfigs get messages naming the file, the entry and the field", async () => {
  const cases: [string, RegExp][] = [
    ["clusters: [\n  - name: a\n", /Invalid kubeconfig .*\/config: not valid YAML: .*line \d+/],
    ["- just\n- a list\n", /Invalid kubeconfig .*\/config: expected a mapping, got a list/],
    ["clusters: {a: 1}\n", /Invalid kubeconfig .*: "clusters" must be a list, got a mapping/],
    ["clusters: [{cluster: {server: https://x}}]\n", /clusters\[0\] has no "name"/],
    [
      "clusters: [{name: a, cluster: {server: 6443}}]\n",
      /Invalid cluster "a" in .*\/config: "server" must be a string, got number 6443/,
    ],
    [
      "clusters: [{name: a, cluster: {server: https://x, insecure-skip-tls-verify: 'yes'}}]\n",
      /"insecure-skip-tls-verify" must be true or false, got string "yes"/,
    ],
    [
      "users: [{name: u, user: {token: t}}, {name: u, user: {token: t}}]\n",
      /users has two entries named "u"; rename or remove one/,
    ],
    [
      "contexts: [{name: c, context: [1]}]\n",
      /Invalid context "c" in .*: expected a mapping, got a list/,
    ],
  ];
  for (const [text, expected] of cases) {
    const dir = await tree({ config: text });
    assert.match(await configError(load({ kubeconfig: `${dir}/config`, context: "c" })), expected);
  }
});

/** A kubeconfig with one context `c` over the given cluster and user bodies. */
function single(cluster: string, user: string): string {
  return `current-context: c
clusters: [{name: k, cluster: ${cluster}}]
users: [{name: u, user: ${user}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
`;
}

Deno.test("cluster problems name the cluster and say what to do", async () => {
  const cases: [string, RegExp][] = [
    ["{}", /Invalid cluster "k" in .*: "server" is missing; set it to the API server URL/],
    ["{server: not a url}", /server "not a url" is not a URL/],
    ["{server: ftp://x}", /must be an https:\/\/ URL/],
    [
      `{server: https://x, certificate-authority: ca.crt, certificate-authority-data: ${b64(CA)}}`,
      /both certificate-authority and certificate-authority-data are set; keep one/,
    ],
    [
      `{server: https://x, insecure-skip-tls-verify: true, certificate-authority-data: ${b64(CA)}}`,
      /insecure-skip-tls-verify is set together with a certificate authority/,
    ],
    [
      "{server: https://x, certificate-authority: missing.crt}",
      /Cannot read certificate-authority .*missing\.crt of cluster "k" in/,
    ],
    [
      "{server: https://x, certificate-authority-data: '%%%'}",
      /certificate-authority-data is not valid base64/,
    ],
    [`{server: https://x, certificate-authority-data: ${b64("hello")}}`, /does not decode to PEM/],
    [
      "{server: http://x, tls-server-name: api.internal}",
      /Invalid cluster "k" in .*: tls-server-name is set but server http:\/\/x is not https:\/\/; remove tls-server-name or use the https:\/\/ URL/,
    ],
    [
      "{server: https://x, tls-server-name: api.internal, proxy-url: http://proxy:3128}",
      /Cannot use cluster "k" in .*: tls-server-name together with proxy-url .*; remove one/,
    ],
  ];
  for (const [cluster, expected] of cases) {
    const dir = await tree({ config: single(cluster, "{}") });
    assert.match(await configError(load({ kubeconfig: `${dir}/config` })), expected, cluster);
  }
});

Deno.test("tls-server-name is the name the server is verified by, with a token", async () => {
  const dir = await tree({
    config: single("{server: https://10.0.0.1:6443, tls-server-name: api.internal}", "{token: t}"),
  });
  const config = await load({ kubeconfig: `${dir}/config` });
  assert.equal(config.server, "https://10.0.0.1:6443");
  assert.equal(config.tlsServerName, "api.internal");
  const withCert = await tree({
    config: single(
      "{server: https://10.0.0.1:6443, tls-server-name: api.internal}",
      `{client-certificate-data: ${b64(CERT)}, client-key-data: ${b64(KEY)}}`,
    ),
  });
  assert.match(
    await configError(load({ kubeconfig: `${withCert}/config` })),
    /^Cannot use context "c" in .*: cluster "k" in .* sets tls-server-name and user "u" a client certificate, and Deno cannot present a client certificate to a server it verifies by another name; authenticate with a token, or use a server URL whose host name is in the server certificate$/,
  );
});

Deno.test("user problems name the user and say what to do", async () => {
  const cases: [string, RegExp][] = [
    ["{auth-provider: {name: gcp}}", /auth-provider "gcp" was removed.*gke-gcloud-auth-plugin/],
    ["{auth-provider: {name: azure}}", /auth-provider "azure" was removed.*kubelogin/],
    ["{auth-provider: {name: oidc, config: {}}}", /auth-provider "oidc" was removed.*kubelogin/],
    ["{username: admin, password: secret}", /username\/password authentication was removed/],
    ["{token: t, as: someone}", /impersonation .* is not supported/],
    [`{client-certificate-data: ${b64(CERT)}}`, /Invalid user "u" in .*: client-key is missing/],
    [
      `{client-key-data: ${b64(KEY)}, client-key: k.key, client-certificate-data: ${b64(CERT)}}`,
      /both client-key and client-key-data are set/,
    ],
    [
      "{tokenFile: nope}",
      /Cannot read the tokenFile of user "u" in .*: .*make sure the file exists/,
    ],
    [
      "{exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}",
      /apiVersion "client.authentication.k8s.io\/v1alpha1" is not supported/,
    ],
    [
      "{exec: {apiVersion: client.authentication.k8s.io/v1}}",
      /Invalid exec of user "u" in .*: "command" is missing/,
    ],
  ];
  for (const [user, expected] of cases) {
    const dir = await tree({ config: single("{server: https://x}", user) });
    assert.match(await configError(load({ kubeconfig: `${dir}/config` })), expected, user);
  }
});

Deno.test("insecure-skip-tls-verify is honoured only when set, with a warning", async () => {
  const lines: string[] = [];
  setupLogging({ level: "warning", write: (line) => lines.push(line) });
  try {
    const dir = await tree({
      config: single("{server: https://x, insecure-skip-tls-verify: true}", "{}"),
    });
    const config = await load({ kubeconfig: `${dir}/config` });
    assert.equal(config.insecureSkipTLSVerify, true);
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? "", /TLS certificate verification of .*https:\/\/x.* is disabled/);
  } finally {
    resetLogging();
  }
});

Deno.test("proxy-url is carried into the config", async () => {
  const dir = await tree({
    config: single("{server: https://x, proxy-url: 'socks5://127.0.0.1:1080'}", "{}"),
  });
  assert.equal((await load({ kubeconfig: `${dir}/config` })).proxyUrl, "socks5://127.0.0.1:1080");
});
