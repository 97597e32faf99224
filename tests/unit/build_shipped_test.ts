/** shippedCommand runs the bundle with exactly what the binary gets: the build's own grants, flags and environment. */
import assert from "node:assert/strict";
import { denoFlags, operatorGrants } from "../../lib/build/grants.ts";
import { shippedCommand } from "../../lib/build/shipped.ts";
import { CODE_CACHE_FLAG, RUNTIME_ENV, V8_FLAGS } from "../../lib/build/tuning.ts";

Deno.test("the shipped command is the binary's flags and environment, the launcher's additions aside", () => {
  const plain = shippedCommand({ name: "mirror-operator", deno: "deno" });
  assert.deepEqual(plain.command, [
    "env",
    "deno",
    "run",
    ...denoFlags(operatorGrants("mirror-operator")),
    "dist/bundle/main.js",
  ]);
  assert.deepEqual(plain.env, RUNTIME_ENV);
  assert.deepEqual(plain.v8Flags, V8_FLAGS);
  assert.ok(plain.command.includes(CODE_CACHE_FLAG));

  const bench = shippedCommand({
    name: "mirror-operator",
    deno: "{deno}",
    env: { KUBECONFIG: "{kubeconfig}", METRICS_ADDRESS: "127.0.0.1:{metricsPort}" },
    read: ["{kubeconfig}"],
    v8Flags: "{v8Flags}",
    args: ["--leader-elect"],
  });
  assert.deepEqual(bench.command.slice(0, 4), [
    "env",
    "KUBECONFIG={kubeconfig}",
    "METRICS_ADDRESS=127.0.0.1:{metricsPort}",
    "{deno}",
  ]);
  assert.ok(bench.command.some((arg) => /^--allow-read=.*,\{kubeconfig\}$/.test(arg)));
  assert.ok(bench.command.some((arg) => /^--allow-env=.*,METRICS_ADDRESS$/.test(arg)));
  assert.ok(bench.command.includes("--v8-flags={v8Flags}"));
  assert.deepEqual(bench.command.slice(-2), ["dist/bundle/main.js", "--leader-elect"]);
});
