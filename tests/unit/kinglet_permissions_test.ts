/**
 * hack/_permissions.ts: what the `KINGLET_ALLOW_<KIND>` variables do to the
 * grants, what a program may and may not do under the resulting `deno run`
 * flags, and that `deno compile` bakes in exactly the same flags.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import {
  CODE_CACHE_FLAG,
  denoFlags,
  grantsFromEnv,
  IGNORED_ENV,
  KINGLET_ENV,
  KINGLET_GRANTS,
  kingletEnv,
  V8_FLAGS,
} from "../../hack/_permissions.ts";
import { BUNDLE_ENTRY } from "../../hack/build.ts";
import { CGROUP_MEMORY_FILES } from "../../lib/runtime/memory/cgroup.ts";
import { compileArgs } from "../../hack/compile.ts";
import { kingletBundle } from "../_support/kinglet_bundle.ts";
import { probe } from "../_support/permission_probe.ts";

async function withTempDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_grants_" });
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a KINGLET_ALLOW_ list extends a kind's grant, all widens it, and the network narrows", () => {
  const grants = grantsFromEnv({
    KINGLET_ALLOW_READ: "/home/me/.kube/config, /etc/rancher/k3s/k3s.yaml",
    KINGLET_ALLOW_ENV: "all",
    KINGLET_ALLOW_NET: "10.43.0.1:443,0.0.0.0:8080",
    KINGLET_ALLOW_RUN: "",
  });
  assert.deepEqual(grants.read, [...KINGLET_GRANTS.read, "/home/me/.kube/config"]);
  assert.equal(grants.env, "all");
  assert.deepEqual(grants.net, ["10.43.0.1:443", "0.0.0.0:8080"]);
  assert.deepEqual(grants.run, []);
  assert.deepEqual(grantsFromEnv({}), KINGLET_GRANTS);
  assert.throws(
    () => grantsFromEnv({ KINGLET_ALLOW_RUN: "aws,,kubectl" }),
    /Cannot read KINGLET_ALLOW_RUN: expected a comma-separated list or "all"/,
  );
});

Deno.test("kinglet's flags show only the granted variables and let yaml parse", async () => {
  const env = {
    KUBECONFIG: "/k/config",
    KINGLET_LOG_LEVEL: "debug",
    AWS_SECRET_ACCESS_KEY: "hidden",
    LOG_TOKENS: "1",
  };
  const all = await probe(denoFlags(), ["env-all"], env);
  // PATH is in the environment but not granted.
  assert.deepEqual(all.value, ["HOME", "KINGLET_LOG_LEVEL", "KUBECONFIG"]);
  const parsed = await probe(denoFlags(), ["yaml", "clusters: [{name: k}]"], env);
  assert.deepEqual(parsed.value, { clusters: [{ name: "k" }] });
  const secret = await probe(denoFlags(), ["env", "AWS_SECRET_ACCESS_KEY"], env);
  assert.match(secret.explanation ?? "", /KINGLET_ALLOW_ENV=AWS_SECRET_ACCESS_KEY/);
  assert.deepEqual([...IGNORED_ENV].sort(), ["LOG_STREAM", "LOG_TOKENS"]);
});

Deno.test("kinglet's flags allow the hostname but no subprocess and no write", async () => {
  const hostname = await probe(denoFlags(), ["hostname"]);
  assert.equal(hostname.value, Deno.hostname());
  const run = await probe(denoFlags(), ["run", "true"]);
  assert.match(run.explanation ?? "", /^kinglet may not run "true"/);
  await withTempDir(async (dir) => {
    const write = await probe(denoFlags(), ["write", join(dir, "x")]);
    assert.match(write.explanation ?? "", /^kinglet may not write/);
  });
});

Deno.test("KINGLET_ALLOW_READ lets kinglet read a kubeconfig elsewhere, and nothing beside it", async () => {
  await withTempDir(async (dir) => {
    const config = join(dir, "config");
    await Deno.writeTextFile(config, "apiVersion: v1\n");
    await Deno.writeTextFile(join(dir, "other"), "secret\n");
    const flags = denoFlags(grantsFromEnv({ KINGLET_ALLOW_READ: config }));
    assert.equal((await probe(flags, ["read", config])).value, "apiVersion: v1\n");
    const other = await probe(flags, ["read", join(dir, "other")]);
    assert.match(other.explanation ?? "", /^kinglet may not read/);
    const before = await probe(denoFlags(), ["read", config]);
    assert.match(
      before.explanation ?? "",
      new RegExp(`KINGLET_ALLOW_READ=${config} deno task start`),
    );
  });
});

Deno.test("KINGLET_ALLOW_NET narrows the network to exactly its list", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const flags = denoFlags(grantsFromEnv({ KINGLET_ALLOW_NET: `127.0.0.1:${port}` }));
  assert.equal((await probe(flags, ["listen", `127.0.0.1:${port}`])).ok, true);
  const other = await probe(flags, ["listen", `127.0.0.1:${port + 1}`]);
  assert.match(other.explanation ?? "", /connect to or listen on/);
  assert.equal((await probe(denoFlags(), ["listen", `127.0.0.1:${port}`])).ok, true);
});

Deno.test("the V8 flags cap the young generation that grows without them", async () => {
  const capped = (await probe(denoFlags(), ["v8-new-space"])).value as number;
  const free = (await probe([], ["v8-new-space"])).value as number;
  assert.ok(capped > 0 && capped <= 2 * 2 ** 20, `young generation of ${capped} bytes`);
  assert.ok(free > capped, `without the flags: ${free} bytes, with them: ${capped}`);
});

/** The JSON object starting at `start` in `text`, found by matching braces outside strings. */
function jsonAt(text: string, start: number): unknown {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return JSON.parse(text.slice(start, i + 1));
  }
  throw new SyntaxError("unterminated JSON object");
}

/** What `denoFlags` says, in the shape of the metadata `deno compile` embeds. */
function expectedMetadata(
  flags: string[],
): { permissions: Record<string, unknown>; v8: string[]; codeCache: boolean } {
  const permissions: Record<string, unknown> = { prompt: true };
  let v8: string[] = [];
  let codeCache = true;
  for (const flag of flags) {
    const [name, value] = flag.split(/=(.*)/s) as [string, string?];
    if (name === "--no-prompt") permissions.prompt = false;
    else if (name === CODE_CACHE_FLAG) codeCache = false;
    else if (name === "--v8-flags") v8 = value!.split(",");
    else permissions[name.slice(2).replace("-", "_")] = value === undefined ? [] : value.split(",");
  }
  return { permissions, v8, codeCache };
}

Deno.test("deno compile bakes in exactly the flags that deno task start passes", async () => {
  await kingletBundle();
  await withTempDir(async (dir) => {
    const output = join(dir, "kinglet");
    // The deno executable stands in for denort, which cannot be downloaded here:
    // the embedded metadata is the same, though the result runs no program.
    const compiled = await new Deno.Command(Deno.execPath(), {
      args: compileArgs("x86_64-unknown-linux-gnu", output, {}),
      env: { DENORT_BIN: await Deno.realPath(Deno.execPath()) },
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(compiled.success, new TextDecoder().decode(compiled.stderr));
    const bytes = await Deno.readFile(output);
    const text = new TextDecoder("latin1").decode(bytes.subarray(bytes.length - 64 * 2 ** 20));
    const metadata = jsonAt(text, text.lastIndexOf('{"argv":')) as {
      code_cache_key: number | null;
      entrypoint_key: string;
      permissions: Record<string, unknown>;
      v8_flags: string[];
    };
    const expected = expectedMetadata(denoFlags());
    for (const [key, value] of Object.entries(metadata.permissions)) {
      if (key === "allow_import") continue; // Deno's default hosts, overridden by deny_import.
      assert.deepEqual(value, expected.permissions[key] ?? null, `${key} in the binary`);
    }
    assert.deepEqual(metadata.v8_flags.slice(-V8_FLAGS.length), [...V8_FLAGS]);
    // A code cache key means the binary would keep V8's code cache, written beside it.
    assert.equal(expected.codeCache, false);
    assert.equal(metadata.code_cache_key, null);
    assert.ok(BUNDLE_ENTRY.endsWith(`/${metadata.entrypoint_key}`), metadata.entrypoint_key);
  });
});

Deno.test("kinglet starts with an empty certificate store unless the user chose one", () => {
  assert.equal(kingletEnv({}).DENO_TLS_CA_STORE, ",");
  assert.equal(kingletEnv({ DENO_TLS_CA_STORE: "system" }).DENO_TLS_CA_STORE, "system");
  // Deno's own reading of the variable: names split on commas, empty ones skipped.
  assert.deepEqual(KINGLET_ENV.DENO_TLS_CA_STORE!.split(",").filter((s) => s.trim()), []);
});

Deno.test("the systemd unit, the Deployment, the image and the bench target set kinglet's environment", async () => {
  const read = (path: string) => Deno.readTextFile(new URL(`../../${path}`, import.meta.url));
  const unit = await read("deploy/systemd/kinglet.service");
  const deployment = parse(await read("deploy/deployment.yaml")) as {
    spec: { template: { spec: { containers: { env?: { name: string; value: string }[] }[] } } };
  };
  const dockerfile = await read("Dockerfile.scratch");
  const target = JSON.parse(await read("bench/targets/kinglet.json")) as {
    env?: Record<string, string>;
  };
  for (const [name, value] of Object.entries(KINGLET_ENV)) {
    assert.match(unit, new RegExp(`^Environment=${name}=${value}$`, "m"));
    assert.deepEqual(
      deployment.spec.template.spec.containers[0]!.env?.find((e) => e.name === name),
      { name, value },
    );
    assert.match(dockerfile, new RegExp(`^ENV ${name}=${value}$`, "m"));
    assert.equal(target.env?.[name], value);
  }
});

Deno.test("no read grant lets kinglet read its cgroup's memory limit: Deno allows /sys only under --allow-all", async () => {
  // Why the Deployment passes the container's limit through the Downward API instead.
  const flags = denoFlags(grantsFromEnv({ KINGLET_ALLOW_READ: CGROUP_MEMORY_FILES.join(",") }));
  for (const path of CGROUP_MEMORY_FILES) {
    const read = await probe(flags, ["read", path]);
    assert.match(read.explanation ?? "", /only under --allow-all/, path);
  }
});
