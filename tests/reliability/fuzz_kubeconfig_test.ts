/**
 * Fuzzing of the kubeconfig parser (`parseKubeconfig`) and of `loadConfig`
 * with an injected file reader: generated kubeconfigs of every shape kinglet
 * supports (CA data or file, insecure-skip-tls-verify, tokens, token files,
 * client certificates, exec plugins, legacy auth providers, several files
 * merged through `KUBECONFIG`), mutated as trees (any node replaced by any
 * value) and as text (truncated, flipped, garbage, huge lines), plus YAML's
 * own hazards (alias bombs, deep nesting, tags, duplicate keys). The only
 * failure allowed is a {@link ConfigError} with a message of bounded length;
 * a success is a usable config; the heap returns to where it was. Pure unit
 * test: no cluster.
 *
 *   deno test -A tests/reliability/fuzz_kubeconfig_test.ts
 *   KINGLET_FUZZ_SEED=7 KINGLET_FUZZ_CASES=50000 deno test -A tests/reliability/fuzz_kubeconfig_test.ts
 */
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { parse, stringify } from "yaml";
import { type ClusterConfig, loadConfig } from "../../lib/kube/config.ts";
import { ConfigError } from "../../lib/kube/errors.ts";
import { parseKubeconfig } from "../../lib/kube/_kubeconfig_file.ts";
import { fuzzCases, fuzzSeed, heapAfterGcMiB, mutateText, NASTY, Prng } from "./_fuzz.ts";
import { figure, fixed1 } from "./_measure.ts";

Deno.test.sanitizer({ ops: true, resources: true });

const PEM =
  "-----BEGIN CERTIFICATE-----\nMIIBfzCCASWgAwIBAgIUQ2FyZWZ1bGx5IGZ1enplZDAKBggqhkjOPQQDAjAA\n" +
  "-----END CERTIFICATE-----\n";
/** Longest message allowed once the names it echoes are taken out. */
const MAX_MESSAGE = 2_000;

type Doc = Record<string, unknown>;

function cluster(rng: Prng, i: number): Doc {
  const body: Doc = { server: rng.pick([`https://10.0.0.${i}:6443`, "https://[::1]:6443"]) };
  switch (rng.int(4)) {
    case 0:
      body["certificate-authority-data"] = btoa(PEM);
      break;
    case 1:
      body["certificate-authority"] = `ca-${i}.crt`;
      break;
    case 2:
      body["insecure-skip-tls-verify"] = true;
      break;
  }
  if (rng.chance(0.1)) body["proxy-url"] = rng.pick(["http://proxy:3128", "socks5://p:1080"]);
  if (rng.chance(0.1)) {
    body.extensions = [{ name: "client.authentication.k8s.io/exec", extension: { a: 1 } }];
  }
  return { name: `c${i}`, cluster: body };
}

function user(rng: Prng, i: number): Doc {
  const kinds: (() => Doc)[] = [
    () => ({ token: `token-${i}` }),
    () => ({ tokenFile: `token-${i}` }),
    () => ({ "client-certificate-data": btoa(PEM), "client-key-data": btoa(PEM) }),
    () => ({ "client-certificate": `u${i}.crt`, "client-key": `u${i}.key` }),
    () => ({
      exec: {
        apiVersion: rng.pick([
          "client.authentication.k8s.io/v1",
          "client.authentication.k8s.io/v1beta1",
        ]),
        command: rng.pick(["aws", "./plugin.sh", "/usr/bin/gke-gcloud-auth-plugin"]),
        args: ["token", "--cluster", `c${i}`],
        env: [{ name: "AWS_PROFILE", value: "edge" }],
        interactiveMode: "Never",
        provideClusterInfo: rng.chance(0.5),
      },
    }),
    () => ({ "auth-provider": { name: rng.pick(["gcp", "oidc", "azure", "acme"]) } }),
    () => ({ username: "admin", password: "hunter2" }),
    () => ({}),
  ];
  return { name: `u${i}`, user: rng.pick(kinds)() };
}

function kubeconfig(rng: Prng): Doc {
  const n = 1 + rng.int(3);
  const contexts = Array.from({ length: n }, (_, i) => ({
    name: `ctx${i}`,
    context: {
      cluster: `c${rng.int(n)}`,
      user: `u${rng.int(n)}`,
      ...(rng.chance(0.5) && { namespace: `ns-${i}` }),
    },
  }));
  return {
    apiVersion: "v1",
    kind: "Config",
    ...(rng.chance(0.9) && { "current-context": `ctx${rng.int(n + 1)}` }),
    clusters: Array.from({ length: n }, (_, i) => cluster(rng, i)),
    users: Array.from({ length: n }, (_, i) => user(rng, i)),
    contexts,
  };
}

function randomValue(rng: Prng): unknown {
  switch (rng.int(8)) {
    case 0:
      return null;
    case 1:
      return rng.int(100) - 50;
    case 2:
      return rng.chance(0.5);
    case 3:
      return rng.text(rng.int(20), "abc-./:" + NASTY);
    case 4:
      return "z".repeat(3_000 + rng.int(20_000));
    case 5:
      return [randomValue(rng)];
    case 6:
      return { name: randomValue(rng) };
    default:
      return rng.pick(["", "~", "0x1F", "1e400", "-.inf", ".nan", "2001-12-14", "yes"]);
  }
}

/** Replaces one node of `doc`, anywhere in the tree, by a random value. */
function mutateTree(rng: Prng, doc: Doc): string {
  let node: unknown = doc;
  const path: string[] = [];
  for (let depth = 0; depth < 6; depth++) {
    if (typeof node !== "object" || node === null) break;
    const keys = Object.keys(node);
    if (keys.length === 0 || (depth > 0 && rng.chance(0.3))) break;
    const key = rng.pick(keys);
    const child = (node as Record<string, unknown>)[key];
    if (typeof child !== "object" || child === null || rng.chance(0.2)) {
      (node as Record<string, unknown>)[key] = randomValue(rng);
      return `set ${[...path, key].join(".")}`;
    }
    path.push(key);
    node = child;
  }
  if (typeof node === "object" && node !== null && !Array.isArray(node)) {
    (node as Record<string, unknown>)[rng.pick(["server", "name", "token", "exec", "extra"])] =
      randomValue(rng);
  }
  return `set under ${path.join(".")}`;
}

/** YAML's own hazards, each a whole file. */
const HAZARDS: readonly string[] = [
  // An alias bomb: the yaml package refuses excessive expansion.
  [
    "a: &a [x, x, x, x, x, x, x, x, x]",
    ...Array.from(
      { length: 9 },
      (_, i) =>
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${
          Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(", ")
        }]`,
    ),
    "clusters: *j",
  ].join("\n"),
  "[".repeat(20_000) + "]".repeat(20_000),
  "clusters:\n" + "  - ".repeat(5_000) + "x",
  "clusters: !!binary aGVsbG8=\n",
  "current-context: !!timestamp 2001-12-14\n",
  "clusters: !!set {a, b}\n",
  "users: !custom-tag {}\n",
  "current-context: a\ncurrent-context: b\n",
  "<<: {clusters: []}\nclusters: 3\n",
  "%YAML 1.1\n---\nclusters: []\n...\n---\nusers: []\n",
  "\ufeffcurrent-context: ctx\n",
  "clusters: [{name: a, cluster: {server: 'https://a'}}, {name: a}]\n",
  "current-context: " + "x".repeat(300_000) + "\n",
];

/** A file reader over generated files, failing the way Deno does for the rest. */
function reader(rng: Prng, main: Record<string, string>) {
  return (path: string): Promise<string> => {
    if (path in main) return Promise.resolve(main[path]!);
    switch (rng.int(6)) {
      case 0:
        return Promise.resolve(PEM);
      case 1:
        return Promise.resolve("token-from-file\n");
      case 2:
        return Promise.resolve("");
      case 3:
        return Promise.reject(new Deno.errors.PermissionDenied(`Permission denied: '${path}'`));
      case 4:
        return Promise.reject(
          new Deno.errors.NotCapable(
            `Requires read access to "${path}", run again with --allow-read`,
          ),
        );
      default:
        return Promise.reject(new Deno.errors.NotFound(`No such file or directory: '${path}'`));
    }
  };
}

function checkConfig(config: ClusterConfig, why: string): void {
  assert.match(new URL(config.server).protocol, /^https?:$/, `${why}: ${config.server}`);
  assert.ok(!config.server.endsWith("/"), why);
  assert.ok(config.namespace.length > 0, why);
  if (config.caCert) assert.ok(config.caCert.includes("-----BEGIN "), why);
  assert.equal(Boolean(config.clientCert), Boolean(config.clientKey), why);
  assert.equal(typeof config.auth.token, "function", why);
}

const PATH_FIELDS = ["certificate-authority", "client-certificate", "client-key", "tokenFile"];

/**
 * The names `text` gives its entries and references, and the files it points
 * to, as errors echo them: verbatim, as kubectl does, since they are what a
 * user searches the file for. Paths resolve against the kubeconfig's folder.
 */
function namesIn(text: string): string[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    return [];
  }
  const names: unknown[] = [];
  const at = (o: unknown, key: string) =>
    typeof o === "object" && o !== null ? (o as Record<string, unknown>)[key] : undefined;
  names.push(at(doc, "current-context"));
  for (const list of ["clusters", "users", "contexts"]) {
    const items = at(doc, list);
    if (!Array.isArray(items)) continue;
    for (const item of items) {
      names.push(at(item, "name"), at(at(item, "context"), "cluster"));
      names.push(at(at(item, "context"), "user"));
      for (const body of [at(item, "cluster"), at(item, "user")]) {
        for (const key of PATH_FIELDS) names.push(at(body, key));
        names.push(at(at(body, "exec"), "command"));
      }
    }
  }
  return names.filter((n): n is string => typeof n === "string" && n.length > 0)
    .flatMap((n) => [n, resolve("/fuzz", n)])
    .sort((a, b) => b.length - a.length);
}

/**
 * Runs `attempt`; only a ConfigError may escape it, and its message, names
 * aside, stays short: a wrong value is quoted by its start, never whole.
 */
async function expectTyped<T>(
  why: string,
  text: string,
  attempt: () => T | Promise<T>,
): Promise<T | ConfigError> {
  try {
    return await attempt();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `${why}: untyped ${error}`);
    const rest = error.message.length <= MAX_MESSAGE
      ? error.message
      : namesIn(text).reduce((m, name) => m.replaceAll(name, "<name>"), error.message);
    assert.ok(
      rest.length <= MAX_MESSAGE,
      `${why}: a ${rest.length}-character message: ${rest.slice(0, 300)}...`,
    );
    return error;
  }
}

Deno.test("parseKubeconfig and loadConfig give a usable config or a ConfigError for any input", async () => {
  const seed = fuzzSeed();
  const cases = fuzzCases(3_000);
  const rng = new Prng(seed);
  const tally = { parsed: 0, loaded: 0, configErrors: 0, merged: 0 };
  heapAfterGcMiB();
  const heapBefore = heapAfterGcMiB();
  const started = performance.now();
  for (let n = 0; n < cases + HAZARDS.length; n++) {
    const hows: string[] = [];
    let text: string;
    if (n >= cases) {
      text = HAZARDS[n - cases]!;
      hows.push(`hazard ${n - cases}`);
    } else {
      const doc = kubeconfig(rng);
      const treeMutations = rng.chance(0.3) ? 0 : 1 + rng.int(3);
      for (let m = 0; m < treeMutations; m++) hows.push(mutateTree(rng, doc));
      text = rng.chance(0.2) ? JSON.stringify(doc) : stringify(doc);
      const textMutations = rng.chance(0.6) ? 0 : 1 + rng.int(2);
      for (let m = 0; m < textMutations; m++) {
        const mutated = mutateText(rng, text);
        text = mutated.text;
        hows.push(mutated.how);
      }
    }
    const why = `seed ${seed} case ${n} (${hows.join(", ") || "intact"})`;

    const parsed = await expectTyped(why, text, () => parseKubeconfig(text, "/fuzz/config"));
    if (parsed instanceof ConfigError) tally.configErrors++;
    else tally.parsed++;

    const merge = rng.chance(0.25);
    const files: Record<string, string> = merge
      ? { "/fuzz/config": text, "/fuzz/second": stringify(kubeconfig(rng)) }
      : { "/fuzz/config": text };
    const read = reader(rng, files);
    const loaded = await expectTyped(why, text, () =>
      loadConfig({
        ...(merge ? {} : { kubeconfig: "/fuzz/config" }),
        env: merge ? { KUBECONFIG: "/fuzz/config:/fuzz/missing:/fuzz/second" } : {},
        readTextFile: read,
        ...(rng.chance(0.2) && { context: `ctx${rng.int(3)}` }),
      }));
    if (loaded instanceof ConfigError) tally.configErrors++;
    else {
      checkConfig(loaded, why);
      tally.loaded++;
      if (merge) tally.merged++;
    }
  }
  const ms = performance.now() - started;
  const heapGrowth = heapAfterGcMiB() - heapBefore;
  figure(
    `fuzz kubeconfig: ${cases} generated + ${HAZARDS.length} YAML hazards (seed ${seed}) through ` +
      `parseKubeconfig and loadConfig in ${fixed1(ms / 1000)} s; ${tally.parsed} parsed, ` +
      `${tally.loaded} loaded (${tally.merged} merged from KUBECONFIG), ${tally.configErrors} ` +
      `ConfigError, 0 untyped; heap growth after GC ${fixed1(heapGrowth)} MiB`,
  );
  assert.ok(tally.loaded > cases / 20, "enough inputs survive to exercise the success path");
  assert.ok(tally.configErrors > cases / 5, "the mutations reach the error paths");
  assert.ok(heapGrowth < 8, `heap grew by ${fixed1(heapGrowth)} MiB`);
});

Deno.test("an intact generated kubeconfig parses to exactly its clusters, users and contexts", async () => {
  const rng = new Prng(fuzzSeed());
  for (let n = 0; n < 500; n++) {
    const doc = kubeconfig(rng) as {
      clusters: { name: string }[];
      users: { name: string }[];
      contexts: { name: string; context: { namespace?: string } }[];
      "current-context"?: string;
    };
    const text = rng.chance(0.5) ? JSON.stringify(doc) : stringify(doc);
    const file = await parseKubeconfig(text, "/fuzz/dir/config");
    assert.deepEqual([...file.clusters.keys()], doc.clusters.map((c) => c.name));
    assert.deepEqual([...file.users.keys()], doc.users.map((u) => u.name));
    assert.deepEqual([...file.contexts.keys()], doc.contexts.map((c) => c.name));
    assert.equal(file.currentContext, doc["current-context"]);
    for (const c of doc.contexts) {
      assert.equal(file.contexts.get(c.name)?.namespace, c.context.namespace);
    }
    for (const c of file.clusters.values()) {
      if (c.certificateAuthority) assert.match(c.certificateAuthority, /^\/fuzz\/dir\/ca-\d\.crt$/);
    }
  }
});
