/**
 * The zod constraints `defineKind` carries into a CRD beyond `z.toJSONSchema`
 * (a record's key constraints, enum keys, regex flags, a second pattern) are
 * accepted by the API server and enforced by it, and a pattern it could not
 * compile is left out.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/crd_constraints_test.ts
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { defineKind } from "../../lib/crd/mod.ts";
import { ApiError } from "../../lib/kube/errors.ts";
import { installCrds, uninstallCrds } from "../../lib/runtime/crds/mod.ts";
import { adminClient } from "../_support/kube.ts";

const sites = defineKind({
  group: "constraints.kinglet.dev",
  version: "v1",
  kind: "EdgeSite",
  scope: "Cluster",
  spec: z.object({
    nodeSelector: z.record(z.string().min(1).max(63).regex(/^[a-z0-9.\/-]+$/i), z.string()),
    quota: z.record(z.enum(["cpu", "memory"]), z.string()).optional(),
    site: z.string().regex(/^edge-/i).regex(/-[0-9]+$/).optional(),
    // zod's hostname pattern has a lookahead, which RE2 (and so the API server) cannot read.
    gateway: z.hostname().optional(),
  }),
  unenforced: "error",
});

Deno.test("the API server enforces what defineKind carries beyond zod's JSON Schema", async () => {
  const client = await adminClient();
  await installCrds(client, [sites.crd()], { fieldManager: "kinglet-test" });
  try {
    const create = (name: string, spec: Record<string, unknown>) =>
      client.create(sites.resource, {
        apiVersion: sites.apiVersion,
        kind: "EdgeSite",
        metadata: { name },
        spec,
      }).then(() => undefined, (error) => error);
    const refused = async (name: string, spec: Record<string, unknown>, message: RegExp) => {
      const error = await create(name, spec);
      assert.ok(error instanceof ApiError && error.status === 422, `${name}: ${error}`);
      assert.match(error.message, message);
    };
    assert.equal(
      await create("good", {
        nodeSelector: { "Topology.kubernetes.io/zone": "a" },
        quota: { cpu: "2", memory: "1Gi" },
        site: "EDGE-7",
        gateway: "gw.example.com",
      }),
      undefined,
    );
    await refused("bad-key", { nodeSelector: { "a b": "x" } }, /every key must be 1 to 63/);
    await refused("empty-key", { nodeSelector: { "": "x" } }, /every key must be 1 to 63/);
    await refused("half-quota", { nodeSelector: {}, quota: { cpu: "2" } }, /memory/);
    await refused("bad-site", { nodeSelector: {}, site: "edge-x" }, /must match -\[0-9\]\+\$/);
    await refused(
      "not-edge",
      { nodeSelector: {}, site: "core-7" },
      /should match '\(\?i\)\^edge-'/,
    );
    await refused("bad-gateway", { nodeSelector: {}, gateway: "-gw" }, /gateway/);
  } finally {
    await uninstallCrds(client, [sites.crd()]);
  }
});
