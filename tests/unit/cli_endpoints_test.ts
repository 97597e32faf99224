import assert from "node:assert/strict";
import { endpointPlan, isLoopback } from "../../lib/cli/endpoints.ts";
import { parseFlags } from "../../lib/cli/flags.ts";
import { RUN_FLAGS, runOptions } from "../../lib/cli/run_flags.ts";

Deno.test("on a node every endpoint stays on loopback, unprotected; in a pod they face the pod network and metrics are protected", () => {
  assert.deepEqual(endpointPlan({}, { inCluster: false }), {
    metricsAddress: "127.0.0.1:8080",
    healthAddress: "127.0.0.1:8081",
    metricsAuth: "none",
    webhookAddress: "127.0.0.1:9443",
  });
  assert.deepEqual(endpointPlan({}, { inCluster: true }), {
    metricsAddress: ":8080",
    healthAddress: ":8081",
    metricsAuth: "tokenreview",
    webhookAddress: ":9443",
  });
});

Deno.test("the webhook flags: on by default, off with --webhooks=false, the certificates beside the Lease unless named", () => {
  const options = (args: string[]) => runOptions(parseFlags(RUN_FLAGS, args, {}).values);
  const defaults = options([]);
  assert.equal(defaults.webhooks, true);
  assert.equal(defaults.webhookCertNamespace, "kinglet-system");
  assert.equal(options(["--webhooks=false"]).webhooks, false);
  assert.equal(
    options(["--leader-election-namespace=ops"]).webhookCertNamespace,
    "ops",
  );
  assert.equal(
    options(["--leader-election-namespace=ops", "--webhook-cert-namespace=certs"])
      .webhookCertNamespace,
    "certs",
  );
  const bound = options(["--webhook-bind-address=127.0.0.1:8443"]);
  assert.equal(endpointPlan(bound, { inCluster: true }).webhookAddress, "127.0.0.1:8443");
});

Deno.test("an address off loopback is protected unless the flag says none, and a disabled one needs nothing", () => {
  const node = { inCluster: false };
  assert.equal(endpointPlan({ metricsAddress: "0.0.0.0:9090" }, node).metricsAuth, "tokenreview");
  assert.equal(endpointPlan({ metricsAddress: ":9090" }, node).metricsAuth, "tokenreview");
  assert.equal(
    endpointPlan({ metricsAddress: ":9090", metricsAuth: "none" }, node).metricsAuth,
    "none",
  );
  assert.equal(endpointPlan({ metricsAddress: "0" }, { inCluster: true }).metricsAuth, "none");
  assert.equal(
    endpointPlan({ metricsAddress: "127.0.0.1:9", metricsAuth: "tokenreview" }, node).metricsAuth,
    "tokenreview",
  );
});

Deno.test("loopback is 127.0.0.0/8, localhost and ::1", () => {
  assert.deepEqual(
    ["127.0.0.1:1", "127.9.9.9:1", "localhost:1", "[::1]:1", ":1", "0.0.0.0:1", "10.0.0.1:1"]
      .map(isLoopback),
    [true, true, true, true, false, false, false],
  );
});

Deno.test("kinglet.env's address lines, uncommented as shown, listen where a node listens by default", async () => {
  const env = await Deno.readTextFile(
    new URL("../../deploy/systemd/kinglet.env", import.meta.url),
  );
  const shown = Object.fromEntries(
    [...env.matchAll(/^#(KINGLET_[A-Z_]*BIND_ADDRESS)=(.*)$/gm)].map(([, name, value]) => [
      name!,
      value!,
    ]),
  );
  assert.deepEqual(Object.keys(shown).sort(), [
    "KINGLET_HEALTH_PROBE_BIND_ADDRESS",
    "KINGLET_METRICS_BIND_ADDRESS",
    "KINGLET_WEBHOOK_BIND_ADDRESS",
  ]);
  const node = { inCluster: false };
  const uncommented = runOptions(parseFlags(RUN_FLAGS, [], shown).values);
  assert.deepEqual(endpointPlan(uncommented, node), endpointPlan({}, node));
});
