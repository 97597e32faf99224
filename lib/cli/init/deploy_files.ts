/**
 * How a generated project ships: `src/operator.ts` describes the operator
 * as `@kinglet/kinglet/deploy` needs it (name, variables, image, namespace,
 * Lease, controllers, memory limit), `scripts/deploy.ts` (`deno task
 * deploy`) writes its deploy files from it, and a unit test fails when the
 * committed ones drift. The files themselves are written by `kinglet init`
 * too, from the same description with a stand-in of the generated
 * controller, so that the project is green as generated.
 *
 * @example
 * ```ts
 * import { projectDeployFiles } from "./deploy_files.ts";
 * import { projectNames } from "./names.ts";
 * const files = projectDeployFiles(projectNames({ group: "example.dev", kind: "Mirror" }));
 * files.has("deploy/systemd/mirror-operator.service"); // true
 * ```
 *
 * @module
 */
import { envPrefix } from "../../build/grants.ts";
import { deployFiles, type OperatorDescription } from "../../deploy/mod.ts";
import { CONFIG_MAPS, type KubeObject } from "../../kube/mod.ts";
import type { ControllerSpec } from "../../runtime/mod.ts";
import type { ProjectNames } from "./names.ts";
import { controllerConst } from "./source_files.ts";

/** The label the generated controller selects its ConfigMaps by (src/controller.ts). */
const MANAGED_BY = "app.kubernetes.io/managed-by";

/** What src/operator.ts declares, but the controllers. */
function described(n: ProjectNames): Omit<OperatorDescription, "controllers"> {
  return {
    name: n.operator,
    envPrefix: `${envPrefix(n.operator)}_`,
    image: `registry.example.com/${n.operator}:0.1.0`,
    namespace: `${n.operator}-system`,
    leaseName: `${n.operator}-leader`,
    memoryLimit: "128Mi",
    crds: [`crds/${n.crdName}.yaml`],
    env: [{
      name: "HEALTH_ADDRESS",
      value: ":8081",
      comment: ["/healthz and /readyz for the kubelet; /metrics stays on loopback."],
    }],
  };
}

/** The project's deploy files, as its `deno task deploy` writes them. */
export function projectDeployFiles(n: ProjectNames): Map<string, string> {
  // Derives the RBAC as the generated controller (src/controller.ts) does: same name, primary
  // and owned ConfigMaps; the project's drift test holds the two together.
  const controller: ControllerSpec<KubeObject> = {
    name: n.operator,
    resource: {
      group: n.group,
      version: n.version,
      plural: n.plural,
      kind: n.kind,
      namespaced: n.namespaced,
    },
    owns: [{ resource: CONFIG_MAPS, labelSelector: `${MANAGED_BY}=${n.operator}` }],
    reconcile: () => Promise.resolve({}),
  };
  return deployFiles({ ...described(n), controllers: [controller] });
}

/** `src/operator.ts`: the operator as its deploy files and main.ts need it. */
export function operatorTs(n: ProjectNames): string {
  const d = described(n);
  const env = d.env![0]!;
  return `/**
 * The ${n.kind} operator as \`deno task deploy\` (scripts/deploy.ts) describes it:
 * its deploy files (RBAC derived from the controller, Deployment, image,
 * systemd units) are written from this, and main.ts reads its Lease and
 * variables from it.
 *
 * @module
 */
import type { OperatorDescription } from "@kinglet/kinglet/deploy";
import { ${controllerConst(n)} } from "./controller.ts";

/** The operator: its name, variables, image, namespace, Lease, controllers, memory limit. */
export const operator = {
  name: "${d.name}",
  // The prefix of its variables (${d.envPrefix}MEMORY_LIMIT), which deno task build grants.
  envPrefix: "${d.envPrefix}",
  // Replace with the registry you push the image to (deploy/Dockerfile.scratch).
  image: "${d.image}",
  namespace: "${d.namespace}",
  leaseName: "${d.leaseName}",
  controllers: [${controllerConst(n)}],
  memoryLimit: "${d.memoryLimit}",
  // What deno task crds writes; deploy/kustomization.yaml applies it before the operator.
  crds: ["${d.crds![0]}"],
  env: [{
    name: "${env.name}",
    value: "${env.value}",
    comment: ["${env.comment![0]}"],
  }],
} satisfies OperatorDescription;
`;
}

/** `scripts/deploy.ts`: `deno task deploy`, and the image's rootfs step. */
export function deployScriptTs(): string {
  return `/**
 * Writes the operator's deploy files from src/operator.ts (\`deno task deploy\`):
 * deploy/'s RBAC, Namespace, Deployment and kustomization, deploy/systemd/'s
 * units, and the FROM scratch image's Dockerfile and file list. With
 * \`--check\`, says what differs instead; with \`--rootfs <dir> <executable>\`,
 * assembles the image's root file system (deploy/Dockerfile.scratch runs it).
 *
 * @module
 */
import { runDeploy } from "@kinglet/kinglet/deploy";
import { operator } from "../src/operator.ts";

await runDeploy(operator, Deno.args);
`;
}

/** `tests/unit/deploy_test.ts`: the committed deploy files are what `deno task deploy` writes. */
export function deployTestTs(): string {
  return `/**
 * The deploy files: written from src/operator.ts, with the controller's RBAC,
 * and committed as \`deno task deploy\` writes them.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { compareDeployFiles, deployFiles } from "@kinglet/kinglet/deploy";
import { operator } from "../../src/operator.ts";

Deno.test("deno task deploy writes the unit, the Deployment and the controller's RBAC", () => {
  const files = deployFiles(operator);
  const unit = files.get(\`deploy/systemd/\${operator.name}.service\`) ?? "";
  const execStart = \`ExecStart=/usr/local/bin/\${operator.name} --leader-elect\`;
  assert.ok(unit.split("\\n").includes(execStart), unit);
  assert.match(files.get("deploy/deployment.yaml") ?? "", /resource: limits\\.memory/);
  assert.match(files.get("deploy/clusterrole.yaml") ?? "", /resources: \\["configmaps"\\]/);
  const role = files.get("deploy/role.yaml") ?? "";
  assert.ok(role.includes(\`resourceNames: ["\${operator.leaseName}"]\`), role);
});

Deno.test("the committed deploy files are what deno task deploy writes", async () => {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  assert.deepEqual(await compareDeployFiles(operator, root), []);
});
`;
}

/** The files of the project that ship it: its description, script, test and deploy files. */
export function shippingFiles(n: ProjectNames): Map<string, string> {
  return new Map([
    ["src/operator.ts", operatorTs(n)],
    ["scripts/deploy.ts", deployScriptTs()],
    ["tests/unit/deploy_test.ts", deployTestTs()],
    ...projectDeployFiles(n),
  ]);
}
