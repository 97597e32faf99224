/**
 * lib/build's grants, flags and environment: an operator of another name gets
 * kinglet's tuning under its own prefix, and kinglet's own are the same
 * function's for the name `kinglet`.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  CODE_CACHE_FLAG,
  compileArgs,
  denoFlags,
  envPrefix,
  grantsFromEnv,
  operatorGrants,
  RUNTIME_ENV,
  runtimeEnv,
  V8_FLAGS,
} from "../../lib/build/mod.ts";
import * as kinglet from "../../hack/_permissions.ts";
import { moduleGraph } from "../_support/module_graph.ts";

const MAIN = new URL("../../main.ts", import.meta.url).href;

Deno.test("an operator's prefix is its name in upper case with '-' as '_'", () => {
  assert.equal(envPrefix("mirror"), "MIRROR");
  assert.equal(envPrefix("mirror-operator"), "MIRROR_OPERATOR");
  for (const bad of ["Mirror", "mirror_op", "-mirror", "mirror-", "", "9lives", "a".repeat(64)]) {
    assert.throws(
      () => envPrefix(bad),
      (error) => error instanceof TypeError && /expected a DNS label/.test(error.message),
      bad,
    );
  }
});

Deno.test("an operator's grants name its own credentials, state folder and variables", () => {
  const grants = operatorGrants("mirror");
  assert.ok(grants.read !== "all" && grants.read.includes("/run/credentials/mirror.service"));
  assert.ok(grants.read.includes("/var/run/secrets/kubernetes.io/serviceaccount"));
  assert.deepEqual(grants.write, ["/var/lib/mirror"]);
  assert.ok(grants.env !== "all" && grants.env.includes("MIRROR_*"));
  assert.ok(!grants.env.includes("KINGLET_*"));
  assert.equal(grants.net, "all");
  assert.deepEqual(grants.sys, ["hostname"]);
});

Deno.test("MIRROR_ALLOW_ variables widen mirror's grants, and KINGLET_ALLOW_ ones do not", () => {
  const options = { prefix: "MIRROR", base: operatorGrants("mirror") };
  const grants = grantsFromEnv({
    MIRROR_ALLOW_READ: "/home/me/.kube/config",
    MIRROR_ALLOW_RUN: "aws",
    MIRROR_ALLOW_NET: "10.43.0.1:443",
    KINGLET_ALLOW_ENV: "all",
  }, options);
  assert.deepEqual(grants.read, [...operatorGrants("mirror").read, "/home/me/.kube/config"]);
  assert.deepEqual(grants.run, ["aws"]);
  assert.deepEqual(grants.net, ["10.43.0.1:443"]);
  assert.notEqual(grants.env, "all");
  assert.throws(
    () => grantsFromEnv({ MIRROR_ALLOW_RUN: "aws,,kubectl" }, options),
    /Cannot read MIRROR_ALLOW_RUN: expected a comma-separated list or "all"/,
  );
});

Deno.test("an operator's flags carry the grants, --no-code-cache and kinglet's V8 flags", () => {
  const flags = denoFlags(operatorGrants("mirror"));
  assert.equal(flags[0], "--no-prompt");
  assert.ok(flags.includes("--allow-sys=hostname"));
  assert.ok(flags.includes("--allow-write=/var/lib/mirror"));
  assert.ok(flags.includes("--deny-import"));
  assert.ok(flags.includes(CODE_CACHE_FLAG));
  assert.equal(flags.at(-1), `--v8-flags=${V8_FLAGS.join(",")}`);
  assert.ok(V8_FLAGS.includes("--max-semi-space-size=1"));
  const args = compileArgs({
    target: "aarch64-unknown-linux-gnu",
    output: "dist/mirror-aarch64-unknown-linux-gnu",
    entry: "dist/bundle/main.js",
    grants: operatorGrants("mirror"),
  });
  assert.deepEqual(args.slice(0, 1 + flags.length), ["compile", ...flags]);
  assert.deepEqual(args.slice(-5), [
    "--target",
    "aarch64-unknown-linux-gnu",
    "--output",
    "dist/mirror-aarch64-unknown-linux-gnu",
    "dist/bundle/main.js",
  ]);
});

Deno.test("the runtime environment sets the allocator and certificate stores unless the user did", () => {
  assert.deepEqual(runtimeEnv({}), { MALLOC_MMAP_THRESHOLD_: "16384", DENO_TLS_CA_STORE: "," });
  assert.equal(runtimeEnv({ DENO_TLS_CA_STORE: "system" }).DENO_TLS_CA_STORE, "system");
  assert.equal(runtimeEnv({ MALLOC_MMAP_THRESHOLD_: "4096" }).MALLOC_MMAP_THRESHOLD_, "4096");
  assert.deepEqual(kinglet.KINGLET_ENV, RUNTIME_ENV);
});

Deno.test("kinglet's own grants and flags are lib/build's for the operator named kinglet", () => {
  assert.deepEqual(kinglet.KINGLET_GRANTS, operatorGrants("kinglet"));
  const env = { KINGLET_ALLOW_READ: "/k/config", KINGLET_ALLOW_NET: "10.0.0.1:6443" };
  assert.deepEqual(kinglet.grantsFromEnv(env), grantsFromEnv(env));
  assert.deepEqual(kinglet.denoFlags(), denoFlags(operatorGrants("kinglet")));
  assert.equal(kinglet.allowVariable("read"), "KINGLET_ALLOW_READ");
});

Deno.test("kinglet's run path never loads lib/build", async () => {
  const { loaded } = await moduleGraph(MAIN);
  const build = fileURLToPath(new URL("../../lib/build/", import.meta.url));
  assert.deepEqual(
    [...loaded].filter((s) => s.startsWith("file:") && fileURLToPath(s).startsWith(build)),
    [],
  );
  assert.ok(loaded.size > 10, "the run path has modules");
});
