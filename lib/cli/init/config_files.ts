/**
 * The generated project's configuration: `deno.json` (import map and the
 * tasks that are its front door), `.gitignore`, and the benchmark target
 * kinglet's harness measures the operator by, with the script that runs it
 * as the build ships it.
 *
 * @module
 */
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
      build: buildTask(kinglet, names.operator),
      // The harness of the kinglet checkout the import map names, as deno task build ships it.
      bench: "deno task crds && deno run --allow-all scripts/bench.ts",
    },
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/**
 * What `deno task bench` says when kinglet is vendored or imported by URL:
 * its harness is no part of the published files, and runs from a checkout,
 * under kinglet's own `deno.json`.
 */
export const BENCH_NEEDS_COPY =
  "deno task bench runs the benchmark harness of a kinglet checkout, which the published " +
  "files the import map names leave out; generate the project with kinglet init --kinglet " +
  "<path of a kinglet checkout>, or point the import map's @kinglet/kinglet/* entries at one";

/** `.gitignore`: what the tasks write and nobody commits. */
export function gitignore(): string {
  return ["/dist/", "/node_modules/", "/coverage/", "/bench/results/", "/bench/latest/", ""]
    .join("\n");
}

/**
 * `bench/target.json`: what kinglet's benchmark creates of this operator's
 * kind and when an object counts as ready (see kinglet's `bench/target.ts`);
 * how it starts the operator, `scripts/bench.ts` takes from the build.
 */
export function benchTarget(names: ProjectNames): string {
  const target = {
    name: names.operator,
    description:
      `The ${names.kind} operator as deno task build ships it: the bundle, with the grants, V8 flags, --no-code-cache and environment of its binary (scripts/bench.ts adds the command from @kinglet/kinglet/build).`,
    crds: [`crds/${names.crdName}.yaml`],
    plural: names.plural,
    object: {
      apiVersion: names.apiVersion,
      kind: names.kind,
      // A cluster-scoped kind names the namespace of its ConfigMap in its spec.
      metadata: names.namespaced
        ? { name: "{name}", namespace: "{namespace}" }
        : { name: "{name}" },
      spec: names.namespaced
        ? { message: "{name}" }
        : { message: "{name}", namespace: "{namespace}" },
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

/**
 * `scripts/bench.ts`: `deno task bench`, kinglet's harness against the
 * operator run as its binary runs, the command from `shippedCommand` of the
 * build, not a copy of its flags.
 */
export function benchScriptTs(): string {
  return `/**
 * Runs kinglet's benchmark against this operator as \`deno task build\` ships
 * it (\`deno task bench\`), beside the Deno floor: the bundle, under the
 * grants, V8 flags, \`--no-code-cache\` and environment its binary gets,
 * from \`shippedCommand\` of @kinglet/kinglet/build itself, so that the
 * figures are those of what ships. bench/target.json says what to create and
 * when it counts as ready; the harness is that of the kinglet checkout the
 * import map names. Arguments go to the harness (\`deno task bench --help\`).
 *
 * @module
 */
import { shippedCommand } from "@kinglet/kinglet/build";
import { operator } from "../src/operator.ts";

const kinglet = new URL("../../", import.meta.resolve("@kinglet/kinglet/build"));
const harness = new URL("bench/main.ts", kinglet);
const found = kinglet.protocol === "file:" &&
  await Deno.stat(harness).then((info) => info.isFile, () => false);
if (!found) {
  console.error("${BENCH_NEEDS_COPY}");
  Deno.exit(1);
}
const { command, env, v8Flags } = shippedCommand({
  name: operator.name,
  deno: "{deno}",
  // The harness's kubeconfig and ports, as variables main.ts reads.
  env: {
    KUBECONFIG: "{kubeconfig}",
    METRICS_ADDRESS: "127.0.0.1:{metricsPort}",
    HEALTH_ADDRESS: "127.0.0.1:{probePort}",
  },
  read: ["{kubeconfig}"],
  v8Flags: "{v8Flags}", // the build's own, unless the harness compares flag sets
});
const target = JSON.parse(await Deno.readTextFile(new URL("../bench/target.json", import.meta.url)));
const results = new URL("../bench/results/", import.meta.url);
await Deno.mkdir(results, { recursive: true });
const file = new URL("target.json", results);
const shipped = {
  ...target,
  cwd: "../..",
  build: ["{deno}", "task", "build", "--bundle-only"],
  command,
  env,
  defaultV8Flags: v8Flags,
};
await Deno.writeTextFile(file, JSON.stringify(shipped, null, 2));
const targets = [file, new URL("bench/targets/deno-floor.json", kinglet)];
const config = new URL("deno.json", kinglet);
const bench = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "--allow-all",
    \`--config=\${config.pathname}\`,
    harness.pathname,
    \`--target=\${targets.map((url) => url.pathname).join(",")}\`,
    ...Deno.args,
  ],
}).spawn();
Deno.exit((await bench.status).code);
`;
}
