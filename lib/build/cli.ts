/**
 * The build an operator project's `deno task build` runs, from the project's
 * root: the minified bundle in `dist/bundle/`, then `dist/<name>-<target>`
 * for each target, with the grants, V8 flags and `--no-code-cache` baked in.
 *
 * ```sh
 * deno run --allow-all <kinglet>/lib/build/cli.ts --name mirror --entry main.ts
 * deno run --allow-all <kinglet>/lib/build/cli.ts --name mirror --bundle-only
 * DENORT_BIN=/opt/denort-2.9.6 deno run --allow-all <kinglet>/lib/build/cli.ts --name mirror
 * ```
 *
 * Exits 0 when everything asked for was built, 1 when a build step failed or
 * a target had no denort (the bundle still stands), 2 on bad arguments.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { relative } from "node:path";
import { PERMISSION_KINDS, type PermissionKind } from "../cli/permissions.ts";
import { build } from "./build.ts";
import { TARGETS } from "./compile.ts";
import { BuildError } from "./errors.ts";
import { envPrefix, type Grant, listOf, operatorGrants, widen } from "./grants.ts";

function usage(): string {
  return `usage: deno run --allow-all <kinglet>/lib/build/cli.ts --name <operator> [options]

Run from the project's root. Writes dist/bundle/<entry>.js, then
dist/<operator>-<target> for each target (default: ${TARGETS.join(" and ")};
with DENORT_BIN set, the target of that file).

  --name <operator>        the operator's name, a DNS label (required)
  --entry <file>           the program to build (default: main.ts)
  --out-dir <folder>       where to write (default: dist)
  --target <target>        a target to compile; repeat or separate with commas
  --bundle-only            bundle, compile nothing
  --force                  rebuild the bundle even when no input changed
  --offline                never download denort, even when dl.deno.land answers
  --allow-<kind> <list>    add to the grants baked into the binary (read, write,
                           net, env, sys, run, ffi, import), or "all"

The operator's <PREFIX>_ALLOW_<KIND> variables widen the grants the same way
(<PREFIX>: the name in upper case, '-' as '_').`;
}

/** Runs the build for `args`; resolves to the exit code. */
export async function main(args: string[]): Promise<number> {
  const allow: Record<string, { type: "string"; multiple: true }> = Object.fromEntries(
    PERMISSION_KINDS.map((kind) => [`allow-${kind}`, { type: "string", multiple: true }]),
  );
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        name: { type: "string" },
        entry: { type: "string", default: "main.ts" },
        "out-dir": { type: "string", default: "dist" },
        target: { type: "string", multiple: true },
        "bundle-only": { type: "boolean" },
        force: { type: "boolean" },
        offline: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        ...allow,
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return refuse(`${(error as Error).message}`);
  }
  if (values.help) {
    say(usage());
    return 0;
  }
  const name = values.name;
  if (!name) return refuse("--name is required: the operator's name, e.g. --name mirror");
  let grants;
  try {
    grants = { ...operatorGrants(name) } as Record<PermissionKind, Grant>;
    for (const kind of PERMISSION_KINDS) {
      const given = (values as Record<string, unknown>)[`allow-${kind}`] as string[] | undefined;
      for (const value of given ?? []) {
        grants[kind] = value === "all"
          ? "all"
          : widen(grants[kind], listOf(value, `--allow-${kind}`));
      }
    }
    envPrefix(name);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return refuse(error.message);
  }

  const targets = (values.target ?? []).flatMap((t) => t.split(",")).filter(Boolean);
  const unknown = targets.filter((t) => !(TARGETS as readonly string[]).includes(t));
  if (unknown.length) {
    return refuse(`unknown target ${unknown.join(", ")}: expected ${TARGETS.join(" or ")}`);
  }
  try {
    const report = await build({
      name,
      entry: values.entry,
      outDir: values["out-dir"],
      targets,
      grants,
      ...(values["bundle-only"] && { bundleOnly: true }),
      ...(values.force && { force: true }),
      ...(values.offline && { download: false }),
      log: (message) => say(`build: ${message}`),
    });
    const built = [report.bundle.entry, ...report.binaries.map((b) => b.path)];
    say(`build: built ${built.map(shown).join(", ")}`);
    if (values["bundle-only"]) {
      say("build: --bundle-only: no binary compiled");
      return 0;
    }
    if (!report.missing.length) return 0;
    for (const { path, advice } of report.missing) {
      say(`build: could not build ${shown(path)}:\n${indent(advice)}`);
    }
    say(`build: then run the build again (the bundle is kept).`);
    return 1;
  } catch (error) {
    if (error instanceof TypeError) return refuse(error.message);
    if (!(error instanceof BuildError)) throw error;
    say(`build: ${error.message}`);
    return 1;
  }
}

function refuse(message: string): number {
  say(`build: ${message}\n\n${usage()}`);
  return 2;
}

function shown(path: string): string {
  return relative(Deno.cwd(), path) || path;
}

function indent(text: string): string {
  return text.split("\n").map((line) => `  ${line}`).join("\n");
}

const encoder = new TextEncoder();
function say(message: string): void {
  Deno.stderr.writeSync(encoder.encode(`${message}\n`));
}

if (import.meta.main) Deno.exit(await main(Deno.args));
