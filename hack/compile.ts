/**
 * `deno task compile`: builds kinglet into one binary per target,
 * `dist/kinglet-<target>`, from the bundle (hack/build.ts, built first), with
 * the permissions, V8 flags and `--no-code-cache` of hack/_permissions.ts
 * baked in (widened by `KINGLET_ALLOW_<KIND>` as for `deno task start`). It is
 * `build` of `@kinglet/kinglet/build` (lib/build/) for the operator named
 * `kinglet`, the build an operator author's `deno task build` runs too.
 *
 * ```sh
 * deno task compile                                    # both Linux targets
 * deno task compile --target x86_64-unknown-linux-gnu
 * KINGLET_ALLOW_READ=/home/me/.kube/config deno task compile
 * DENORT_BIN=/opt/denort-2.9.6 deno task compile       # air-gapped: no download
 * ```
 *
 * `deno compile` appends the program to `denort`, the Deno runtime without
 * its tooling, which it downloads once per Deno version and target from
 * dl.deno.land into `$DENO_DIR/dl/release/v<version>/denort-<target>.zip`.
 * Where that host is unreachable, either put those zips there beforehand, or
 * set `DENORT_BIN` to an unzipped `denort` of exactly this Deno version:
 * Deno then embeds into that file whatever `--target` says, so the build
 * reads which machine the file is for and builds only that target. Where
 * neither is at hand and dl.deno.land does not answer, it says so and exits 1
 * after the bundle, rather than wait on a download.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as lib from "../lib/build/mod.ts";
import { BUNDLE_ENTRY, BUNDLE_INPUTS } from "./build.ts";
import { grantsFromEnv, KINGLET_GRANTS } from "./_permissions.ts";

export { elfTarget, type Target, TARGETS } from "../lib/build/mod.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));

const encoder = new TextEncoder();
function say(stream: typeof Deno.stderr, message: string): void {
  stream.writeSync(encoder.encode(`${message}\n`));
}

/** Where `deno task compile` writes the binary for `target`. */
export function binaryPath(target: lib.Target): string {
  return join(REPO, "dist", `kinglet-${target}`);
}

/**
 * The `deno compile` arguments that build `target` into `output` from the
 * bundle, with the grants `env`'s `KINGLET_ALLOW_<KIND>` variables give.
 *
 * @throws {TypeError} when such a variable lists an empty entry.
 */
export function compileArgs(
  target: lib.Target,
  output: string,
  env: Record<string, string | undefined>,
): string[] {
  return lib.compileArgs({ target, output, entry: BUNDLE_ENTRY, grants: grantsFromEnv(env) });
}

function usage(): string {
  return `usage: deno task compile [--target <target>]...

Builds dist/kinglet-<target> for ${lib.TARGETS.join(" and ")} (default: both;
with DENORT_BIN set, the target of that file).`;
}

async function main(args: string[]): Promise<number> {
  let asked: string[];
  try {
    const { values } = parseArgs({
      args,
      options: {
        target: { type: "string", multiple: true },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    });
    if (values.help) {
      say(Deno.stdout, usage());
      return 0;
    }
    asked = (values.target ?? []).flatMap((t) => t.split(",")).filter(Boolean);
  } catch (error) {
    say(Deno.stderr, `compile: ${(error as Error).message}\n${usage()}`);
    return 2;
  }
  const log = (message: string) => say(Deno.stderr, `compile: ${message}`);
  const env = Deno.env.toObject();
  let targets: lib.Target[];
  try {
    // Refused before the bundle, as usage errors.
    grantsFromEnv(env);
    targets = await lib.chooseTargets(asked, env.DENORT_BIN ? resolve(env.DENORT_BIN) : undefined);
  } catch (error) {
    if (!(error instanceof TypeError || error instanceof lib.BuildError)) throw error;
    log(error.message);
    return 2;
  }
  let report: lib.BuildReport;
  try {
    report = await lib.build({
      name: "kinglet",
      root: REPO,
      inputs: BUNDLE_INPUTS,
      targets,
      grants: KINGLET_GRANTS,
      env,
      log,
    });
  } catch (error) {
    if (!(error instanceof lib.BuildError)) throw error;
    log(error.message);
    return 1;
  }
  if (!report.missing.length) return 0;
  for (const { target, advice } of report.missing) {
    log(`building ${target} failed:\n${advice}`);
  }
  log('then run deno task compile again. See docs/node-mode.md, "Air-gapped builds".');
  return 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
