/**
 * The generated project's configuration: `deno.json` (import map and the
 * tasks that are its front door), `.gitignore`, and the benchmark target
 * kinglet's harness measures the operator by.
 *
 * @module
 */
import { LINE_WIDTH } from "./_format.ts";
import { importMap } from "./dependency.ts";
import type { ProjectNames } from "./names.ts";

/**
 * `deno task build`: kinglet's own build (`lib/build/cli.ts`, the one behind
 * kinglet's `deno task compile`) from wherever the project finds kinglet,
 * for the operator `operator`. The binary may read the two variables main.ts
 * reads beside the runtime's own.
 */
function buildTask(kinglet: string, operator: string): string {
  return `deno run --allow-all ${kinglet}/lib/build/cli.ts --name ${operator} --entry main.ts ` +
    "--allow-env=METRICS_ADDRESS,HEALTH_ADDRESS";
}

/** The permissions the operator runs with: the cluster, its kubeconfig, its variables. */
export const RUN_PERMISSIONS = "--allow-net --allow-read --allow-env --allow-sys=hostname";

/** `deno.json`: kinglet through the import map, kinglet's compiler options, the tasks. */
export function denoJson(kinglet: string, names: ProjectNames): string {
  const config = {
    imports: importMap(kinglet),
    compilerOptions: {
      strict: true,
      noUncheckedIndexedAccess: true,
      noImplicitOverride: true,
      noFallthroughCasesInSwitch: true,
    },
    fmt: { lineWidth: LINE_WIDTH, proseWrap: "preserve", exclude: ["crds/", "deploy/", "vendor/"] },
    lint: { exclude: ["vendor/"] },
    tasks: {
      check: "deno fmt --check && deno lint && deno check main.ts src/ scripts/ tests/",
      test: "deno test --allow-all tests/unit/",
      // The e2e test applies the CRD that deno task crds writes, as a user does.
      e2e: "deno task crds && deno test --allow-all tests/e2e/",
      crds: "deno run --allow-read --allow-write=crds/ scripts/crds.ts",
      deploy: "deno run --allow-read --allow-write=deploy/,crds/ scripts/deploy.ts",
      start: `deno run ${RUN_PERMISSIONS} main.ts`,
      build: buildTask(kinglet, names.operator),
      bench: benchTask(kinglet),
    },
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/**
 * What `deno task bench` says when kinglet is imported by URL: its harness
 * runs from a copy on disk, under kinglet's own `deno.json`.
 */
export const BENCH_NEEDS_COPY =
  "not yet available: deno task bench runs the benchmark of a kinglet copy on disk; " +
  "generate the project with kinglet init --kinglet <path of a kinglet checkout>, " +
  "or vendor one (see README.md)";

/**
 * `deno task bench`: kinglet's harness, under kinglet's own `deno.json` (it
 * imports more npm packages than the project maps), measuring this operator
 * by `bench/target.json` beside the Deno floor (the least an operator on
 * Deno holds idle) in the same run.
 */
function benchTask(kinglet: string): string {
  if (/^https?:\/\//.test(kinglet)) return `echo '${BENCH_NEEDS_COPY}' >&2 && exit 1`;
  return `deno task crds && deno run --allow-all --config ${kinglet}/deno.json ` +
    `${kinglet}/bench/main.ts --target bench/target.json,${kinglet}/bench/targets/deno-floor.json`;
}

/** `.gitignore`: what the tasks write and nobody commits. */
export function gitignore(): string {
  return ["/dist/", "/node_modules/", "/coverage/", "/bench/results/", "/bench/latest/", ""]
    .join("\n");
}

/**
 * `bench/target.json`: how kinglet's benchmark (`bench/main.ts --target`)
 * starts this operator, what it creates, and when an object counts as ready;
 * see kinglet's `bench/target.ts`.
 */
export function benchTarget(names: ProjectNames): string {
  const target = {
    name: names.operator,
    description: `The ${names.kind} operator, run as deno task start runs it.`,
    cwd: "..",
    build: ["{deno}", "task", "crds"],
    // env passes the ports as variables main.ts reads, then execs Deno (the same process).
    command: [
      "env",
      "KUBECONFIG={kubeconfig}",
      "METRICS_ADDRESS=127.0.0.1:{metricsPort}",
      "HEALTH_ADDRESS=127.0.0.1:{probePort}",
      "{deno}",
      "run",
      "--no-prompt",
      ...RUN_PERMISSIONS.split(" "),
      "main.ts",
    ],
    crds: [`crds/${names.crdName}.yaml`],
    plural: names.plural,
    object: {
      apiVersion: names.apiVersion,
      kind: names.kind,
      metadata: { name: "{name}", namespace: "{namespace}" },
      spec: { message: "{name}" },
    },
    update: { spec: { message: "updated" } },
    ready: {
      path: "status.conditions[type=Ready].status",
      equals: "True",
      observedGenerationPath: "status.observedGeneration",
    },
    readyzPath: "/readyz",
    metricsPath: "/metrics",
  };
  return `${JSON.stringify(target, null, 2)}\n`;
}
