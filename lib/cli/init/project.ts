/**
 * The files of a project `kinglet init` writes, by path: a pure function of
 * the names and of where kinglet is, so that what is generated is tested
 * without writing anything. The code, tests, scripts, README and benchmark
 * target come from the scaffold (`scaffold.ts`); the files that are data are
 * written here: `deno.json` (the import map of where kinglet is, and the
 * tasks), `kinglet.json` (which kinglet that is), and the deploy files, as
 * the project's `deno task deploy` writes them from the scaffold's
 * `src/operator.ts`.
 *
 * @example
 * ```ts
 * import { projectFiles } from "./project.ts";
 * import { projectNames } from "./names.ts";
 * const files = projectFiles(projectNames({ group: "example.dev", kind: "Mirror" }), {
 *   source: "../kinglet",
 * });
 * files.has("src/schema.ts"); // true
 * files.has("deploy/systemd/mirror-operator.service"); // true
 * ```
 *
 * @module
 */
import { envPrefix } from "../../build/grants.ts";
import { type KingletRecord, kingletRecordJson } from "../../build/vendor.ts";
import { deployFiles } from "../../deploy/mod.ts";
import { CONFIG_MAPS, type KubeObject } from "../../kube/mod.ts";
import type { ControllerSpec } from "../../runtime/mod.ts";
import { allowed } from "../../runtime/webhook/spec.ts";
import { importMap } from "./dependency.ts";
import type { ProjectNames } from "./names.ts";
import { scaffoldFiles, type ScaffoldOptions } from "./scaffold.ts";

/**
 * Every file of the project, by its path relative to the project's folder,
 * for an import map that finds the kinglet of `kinglet` at its `source` (see
 * `dependency.ts`); the copy of a vendored kinglet is not among them.
 */
export function projectFiles(
  names: ProjectNames,
  kinglet: KingletRecord,
  options: ScaffoldOptions = {},
): Map<string, string> {
  return new Map([
    ...scaffoldFiles(names, kinglet, options),
    ["deno.json", denoJson(kinglet.source, names, options)],
    ["kinglet.json", kingletRecordJson(kinglet)],
    ...projectDeployFiles(names, options),
  ]);
}

/** The permissions the operator runs with: the cluster, its kubeconfig, its variables. */
export const RUN_PERMISSIONS = "--allow-net --allow-read --allow-env --allow-sys=hostname";

/** `deno.json`: kinglet through the import map, kinglet's compiler options, the tasks. */
function denoJson(kinglet: string, names: ProjectNames, options: ScaffoldOptions): string {
  const env = [
    "METRICS_ADDRESS",
    "HEALTH_ADDRESS",
    ...(options.webhook ? ["WEBHOOK_ADDRESS"] : []),
  ];
  const config = {
    imports: importMap(kinglet),
    compilerOptions: {
      strict: true,
      noUncheckedIndexedAccess: true,
      noImplicitOverride: true,
      noFallthroughCasesInSwitch: true,
    },
    fmt: { lineWidth: 100, proseWrap: "preserve", exclude: ["crds/", "deploy/", "vendor/"] },
    lint: { exclude: ["vendor/"] },
    tasks: {
      check: "deno fmt --check && deno lint && deno check main.ts src/ scripts/ tests/",
      test: "deno test --allow-all tests/unit/",
      // The e2e test applies the CRD that deno task crds writes, as a user does.
      e2e: "deno task crds && deno test --allow-all tests/e2e/",
      crds: "deno run --allow-read --allow-write=crds/ scripts/crds.ts",
      deploy: "deno run --allow-read --allow-write=deploy/,crds/ scripts/deploy.ts",
      start: `deno run ${RUN_PERMISSIONS} main.ts`,
      // kinglet's own build (the one behind kinglet's deno task compile), from wherever the
      // project finds kinglet; the binary may read the variables main.ts reads.
      build: `deno run --allow-all ${kinglet}/lib/build/cli.ts --name ${names.operator} ` +
        `--entry main.ts --allow-env=${env.join(",")}`,
      // The harness of the kinglet checkout the import map names, as deno task build ships it.
      bench: "deno task crds && deno run --allow-all scripts/bench.ts",
    },
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** The label the scaffold's controller selects its ConfigMaps by (src/controller.ts). */
const MANAGED_BY = "app.kubernetes.io/managed-by";

/**
 * The project's deploy files, as its `deno task deploy` writes them from the
 * description of the scaffold's `src/operator.ts`, with a stand-in of its
 * controller: the project's `tests/unit/deploy_test.ts` fails when they
 * drift, and kinglet's scaffold test holds the two descriptions together.
 */
export function projectDeployFiles(
  n: ProjectNames,
  options: ScaffoldOptions = {},
): Map<string, string> {
  // Derives the RBAC as the scaffold's controller does: same name, primary and owned ConfigMaps.
  const resource = {
    group: n.group,
    version: n.version,
    plural: n.plural,
    kind: n.kind,
    namespaced: n.namespaced,
  };
  const controller: ControllerSpec<KubeObject> = {
    name: n.operator,
    resource,
    owns: [{ resource: CONFIG_MAPS, labelSelector: `${MANAGED_BY}=${n.operator}` }],
    // As the webhook variant's src/controller.ts grants its webhook's reads.
    ...(options.webhook && {
      rbac: [{
        apiGroups: [""],
        resources: ["configmaps"],
        verbs: ["get"],
        reason: `the webhook reads the ConfigMap a ${n.kind} would write`,
      }],
    }),
    reconcile: () => Promise.resolve({}),
  };
  return deployFiles({
    name: n.operator,
    envPrefix: `${envPrefix(n.operator)}_`,
    image: `registry.example.com/${n.operator}:0.1.0`,
    namespace: `${n.operator}-system`,
    leaseName: `${n.operator}-leader`,
    controllers: [controller],
    memoryLimit: "128Mi",
    crds: [`crds/${n.crdName}.yaml`],
    env: [{
      name: "HEALTH_ADDRESS",
      value: ":8081",
      comment: ["/healthz and /readyz for the kubelet; /metrics stays on loopback."],
    }, ...(options.webhook ? [WEBHOOK_ADDRESS] : [])],
    // As the webhook variant's src/webhook.ts declares it: validates and defaults, Fail, 5 s.
    ...(options.webhook && {
      webhooks: {
        admission: [{
          resource,
          validate: () => allowed(),
          default: (object: KubeObject) => object,
          failurePolicy: "Fail" as const,
          timeoutSeconds: 5,
        }],
      },
    }),
  });
}

/** The variable the webhook variant's src/operator.ts sets in the container. */
const WEBHOOK_ADDRESS = {
  name: "WEBHOOK_ADDRESS",
  value: ":9443",
  comment: ["The webhook on every interface, for the Service of webhooks.yaml."],
};
