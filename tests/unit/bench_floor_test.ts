import assert from "node:assert/strict";
import { parseFloorArgs } from "../../bench/targets/floor.ts";

Deno.test("the floor reads the harness's flags and defaults to watching WebApps", () => {
  const options = parseFloorArgs([
    "--kubeconfig=/tmp/k",
    "--metrics-bind-address=127.0.0.1:8080",
    "--health-probe-bind-address=[::1]:8081",
  ]);
  assert.deepEqual(options, {
    kubeconfig: "/tmp/k",
    metrics: { hostname: "127.0.0.1", port: 8080 },
    probes: { hostname: "[::1]", port: 8081 },
    resource: "/apis/kinglet.dev/v1alpha1/webapps",
  });
  const other = parseFloorArgs([
    "--kubeconfig=/tmp/k",
    "--metrics-bind-address=127.0.0.1:1",
    "--health-probe-bind-address=127.0.0.1:2",
    "--resource=/api/v1/configmaps",
  ]);
  assert.equal(other.resource, "/api/v1/configmaps");
});

Deno.test("the floor names a missing, unknown or malformed flag", () => {
  const probes = "--health-probe-bind-address=127.0.0.1:2";
  const metrics = "--metrics-bind-address=127.0.0.1:1";
  assert.throws(() => parseFloorArgs([metrics, probes]), /--kubeconfig is required/);
  assert.throws(
    () => parseFloorArgs(["--kubeconfig=k", metrics, probes, "--concurrency=4"]),
    /unknown flag --concurrency/,
  );
  assert.throws(
    () => parseFloorArgs(["--kubeconfig=k", "--metrics-bind-address=8080", probes]),
    /--metrics-bind-address must be host:port, got "8080"/,
  );
  assert.throws(() => parseFloorArgs(["--kubeconfig", "k"]), /expected --name=value/);
});
