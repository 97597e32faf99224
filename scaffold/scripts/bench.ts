/**
 * Runs kinglet's benchmark against this operator as `deno task build` ships
 * it (`deno task bench`), beside the Deno floor: the bundle, under the
 * grants, V8 flags, `--no-code-cache` and environment its binary gets,
 * from `shippedCommand` of @kinglet/kinglet/build itself, so that the
 * figures are those of what ships. bench/target.json says what to create and
 * when it counts as ready; the harness is that of the kinglet checkout the
 * import map names. Arguments go to the harness (`deno task bench --help`).
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
  // deno-lint-ignore no-console -- the script's output is its interface
  console.error(
    "deno task bench runs the benchmark harness of a kinglet checkout, which the published files the import map names leave out; generate the project with kinglet init --kinglet <path of a kinglet checkout>, or point the import map's @kinglet/kinglet/* entries at one",
  );
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
const target = JSON.parse(
  await Deno.readTextFile(new URL("../bench/target.json", import.meta.url)),
);
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
    `--config=${config.pathname}`,
    harness.pathname,
    `--target=${targets.map((url) => url.pathname).join(",")}`,
    ...Deno.args,
  ],
}).spawn();
Deno.exit((await bench.status).code);
