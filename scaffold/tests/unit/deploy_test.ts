/**
 * The deploy files: written from src/operator.ts, with the controller's RBAC,
 * and committed as `deno task deploy` writes them.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { compareDeployFiles, deployFiles } from "@kinglet/kinglet/deploy";
import { operator } from "../../src/operator.ts";

Deno.test("deno task deploy writes the unit, the Deployment and the controller's RBAC", () => {
  const files = deployFiles(operator);
  const unit = files.get(`deploy/systemd/${operator.name}.service`) ?? "";
  const execStart = `ExecStart=/usr/local/bin/${operator.name} --leader-elect`;
  assert.ok(unit.split("\n").includes(execStart), unit);
  assert.match(files.get("deploy/deployment.yaml") ?? "", /resource: limits\.memory/);
  assert.match(files.get("deploy/clusterrole.yaml") ?? "", /resources: \["configmaps"\]/);
  const role = files.get("deploy/role.yaml") ?? "";
  assert.ok(role.includes(`resourceNames: ["${operator.leaseName}"]`), role);
});

Deno.test("the committed deploy files are what deno task deploy writes", async () => {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  assert.deepEqual(await compareDeployFiles(operator, root), []);
});
