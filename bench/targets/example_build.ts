// deno-lint-ignore-file no-console -- a terminal program
/**
 * The `build` of an example's bench target: bundles `examples/<name>/main.ts`
 * with `@kinglet/kinglet/build`, as an author's `deno task build
 * --bundle-only` does (the same minified bundle, tuning and grants), into
 * `dist/examples/<name>/bundle/`. The harness applies the example's
 * committed CRDs (`examples/<name>/crds/`) first.
 *
 * ```sh
 * deno run -A bench/targets/example_build.ts backup
 * ```
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "../../lib/build/mod.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** Bundles the example `name`; returns the folder written. */
export async function buildExample(name: string): Promise<string> {
  if (!/^[a-z][a-z0-9-]*$/.test(name)) {
    throw new TypeError(`Cannot build example '${name}': name an example folder, e.g. backup`);
  }
  const outDir = join("dist", "examples", name);
  await build({
    name: `${name}-example`,
    root: REPO,
    entry: `examples/${name}/main.ts`,
    outDir,
    bundleOnly: true,
  });
  return join(REPO, outDir);
}

if (import.meta.main) {
  const [name] = Deno.args;
  if (!name) {
    console.error("usage: deno run -A bench/targets/example_build.ts <example>");
    Deno.exit(2);
  }
  console.log(await buildExample(name));
}
