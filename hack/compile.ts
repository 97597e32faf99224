/**
 * `deno task compile`: builds kinglet into one binary per target,
 * `dist/kinglet-<target>`, from the bundle (hack/build.ts, built first), with
 * the permissions, V8 flags and `--no-code-cache` of hack/_permissions.ts
 * baked in (widened by `KINGLET_ALLOW_<KIND>` as for `deno task start`).
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
 * Deno then embeds into that file whatever `--target` says, so this script
 * reads which machine the file is for and builds only that target.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildBundle, BuildError, BUNDLE_ENTRY } from "./build.ts";
import { denoFlags, grantsFromEnv, kingletEnv } from "./_permissions.ts";

/** The targets kinglet ships for. */
export const TARGETS = ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"] as const;

/** One of {@link TARGETS}. */
export type Target = typeof TARGETS[number];

const REPO = fileURLToPath(new URL("..", import.meta.url));

const encoder = new TextEncoder();
function say(stream: typeof Deno.stderr, message: string): void {
  stream.writeSync(encoder.encode(`${message}\n`));
}

/** ELF `e_machine` values of the targets. */
const ELF_MACHINES: Record<number, Target> = {
  0x3e: "x86_64-unknown-linux-gnu",
  0xb7: "aarch64-unknown-linux-gnu",
};

/** Where `deno task compile` writes the binary for `target`. */
export function binaryPath(target: Target): string {
  return join(REPO, "dist", `kinglet-${target}`);
}

/**
 * The target a Linux executable is for, read from its ELF header, or
 * `undefined` when it is none of {@link TARGETS}.
 *
 * @example
 * ```ts
 * import { elfTarget } from "./compile.ts";
 * await elfTarget(Deno.execPath()); // "x86_64-unknown-linux-gnu" on a PC
 * ```
 */
export async function elfTarget(path: string): Promise<Target | undefined> {
  using file = await Deno.open(path);
  const header = new Uint8Array(20);
  let read = 0;
  while (read < header.length) {
    const n = await file.read(header.subarray(read));
    if (n === null) return undefined;
    read += n;
  }
  const isElf = header[0] === 0x7f && header[1] === 0x45 && header[2] === 0x4c &&
    header[3] === 0x46;
  // Byte 5 is 1 for little-endian, the only byte order of both targets.
  if (!isElf || header[5] !== 1) return undefined;
  return ELF_MACHINES[header[18]! | (header[19]! << 8)];
}

/**
 * The `deno compile` arguments that build `target` into `output` from the
 * bundle. The bundle holds the npm code kinglet uses; `--exclude-unused-npm`
 * keeps the packages of deno.json's imports that only the benchmark or the
 * types use (`@kubernetes/client-node`) out of the binary.
 */
export function compileArgs(
  target: Target,
  output: string,
  env: Record<string, string | undefined>,
): string[] {
  return [
    "compile",
    ...denoFlags(grantsFromEnv(env)),
    "--exclude-unused-npm",
    "--target",
    target,
    "--output",
    output,
    BUNDLE_ENTRY,
  ];
}

function usage(): string {
  return `usage: deno task compile [--target <target>]...

Builds dist/kinglet-<target> for ${TARGETS.join(" and ")} (default: both;
with DENORT_BIN set, the target of that file).`;
}

/** Checks the targets asked for, or picks the defaults; a message when they cannot be built. */
async function chooseTargets(
  asked: string[],
  denort: string | undefined,
): Promise<Target[] | string> {
  const unknown = asked.filter((t) => !(TARGETS as readonly string[]).includes(t));
  if (unknown.length) {
    return `unknown target ${unknown.join(", ")}: expected ${TARGETS.join(" or ")}`;
  }
  const targets = asked.length ? [...new Set(asked as Target[])] : [...TARGETS];
  if (denort === undefined) return targets;
  let target: Target | undefined;
  try {
    target = await elfTarget(denort);
  } catch (error) {
    return `DENORT_BIN=${denort} cannot be read: ${(error as Error).message}`;
  }
  if (!target) {
    return `DENORT_BIN=${denort} is not a Linux executable for ${TARGETS.join(" or ")}`;
  }
  if (!asked.length) return [target];
  const others = targets.filter((t) => t !== target);
  if (others.length) {
    return `DENORT_BIN=${denort} is a denort for ${target}, so it cannot build ` +
      `${others.join(", ")}: build one target per DENORT_BIN`;
  }
  return targets;
}

async function denoDir(): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  const info = JSON.parse(new TextDecoder().decode(output.stdout)) as { denoDir?: string };
  return info.denoDir ?? "$DENO_DIR";
}

/** What to do when `deno compile` could not get denort, or undefined for other failures. */
async function denortAdvice(stderr: string, target: Target): Promise<string | undefined> {
  if (!/dl\.deno\.land|Setting up base binary|Could not find denort/.test(stderr)) {
    return undefined;
  }
  const version = Deno.version.deno;
  const zip = `denort-${target}.zip`;
  return [
    `deno compile could not get denort ${version} for ${target}, the runtime every kinglet`,
    `binary is built on. It downloads https://dl.deno.land/release/v${version}/${zip}`,
    "once; where that host is unreachable:",
    `  - put ${zip} into ${join(await denoDir(), "dl", "release", `v${version}`)}/, or`,
    `  - unzip it and set DENORT_BIN to the denort inside (one target per build),`,
    'then run deno task compile again. See the README\'s "Air-gapped builds".',
  ].join("\n");
}

function childEnv(
  env: Record<string, string>,
  denort: string | undefined,
): Record<string, string> {
  const { DENORT_BIN: _, ...rest } = env;
  // deno compile bakes the certificate stores it is started with into the binary.
  const base = { ...rest, ...kingletEnv(env) };
  return denort ? { ...base, DENORT_BIN: denort } : base;
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
  const env = Deno.env.toObject();
  const denort = env.DENORT_BIN ? resolve(env.DENORT_BIN) : undefined;
  const targets = await chooseTargets(asked, denort);
  if (typeof targets === "string") {
    say(Deno.stderr, `compile: ${targets}`);
    return 2;
  }

  try {
    await buildBundle({ log: (message) => say(Deno.stderr, `compile: ${message}`) });
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    say(Deno.stderr, `compile: ${error.message}`);
    return 1;
  }
  for (const target of targets) {
    const output = binaryPath(target);
    await Deno.mkdir(join(REPO, "dist"), { recursive: true });
    let args: string[];
    try {
      args = compileArgs(target, output, env);
    } catch (error) {
      say(Deno.stderr, `compile: ${(error as Error).message}`);
      return 2;
    }
    say(Deno.stderr, `compile: ${target} → ${output}`);
    const result = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: REPO,
      // An empty DENORT_BIN (an unset build argument) must not reach Deno, which would read ''.
      clearEnv: true,
      env: childEnv(env, denort),
      stdout: "inherit",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(result.stderr);
    Deno.stderr.writeSync(result.stderr);
    if (!result.success) {
      const advice = await denortAdvice(stderr, target);
      say(Deno.stderr, `compile: building ${target} failed${advice ? `:\n${advice}` : ""}`);
      return 1;
    }
    const { size } = await Deno.stat(output);
    say(Deno.stderr, `compile: built ${output} (${(size / 2 ** 20).toFixed(1)} MiB)`);
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
