/**
 * Compiles a bundle into one binary per target with `deno compile`, the
 * grants, code-cache flag and V8 flags baked in, and the tuned environment
 * set while it compiles.
 *
 * `deno compile` appends the program to `denort`, the Deno runtime without
 * its tooling, which it downloads once per Deno version and target from
 * dl.deno.land into `$DENO_DIR/dl/release/v<version>/denort-<target>.zip`.
 * Where that host is unreachable, either put those zips there beforehand, or
 * set `DENORT_BIN` to an unzipped `denort` of exactly this Deno version:
 * Deno then embeds into that file whatever `--target` says, so
 * {@link chooseTargets} reads which machine the file is for and builds only
 * that target. {@link findDenort} says beforehand whether a target can be
 * built, so that a build never waits on a download that cannot succeed.
 *
 * @example
 * ```ts
 * import { compileArgs, operatorGrants } from "./mod.ts";
 * const args = compileArgs({
 *   target: "x86_64-unknown-linux-gnu",
 *   output: "dist/mirror-x86_64-unknown-linux-gnu",
 *   entry: "dist/bundle/main.js",
 *   grants: operatorGrants("mirror"),
 * });
 * args.includes("--no-code-cache"); // true
 * ```
 *
 * @module
 */
import { join } from "node:path";
import { BuildError } from "./errors.ts";
import { denoFlags, type Grants } from "./grants.ts";
import { runtimeEnv } from "./tuning.ts";

/** The targets an operator ships for. */
export const TARGETS = ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"] as const;

/** One of {@link TARGETS}. */
export type Target = typeof TARGETS[number];

/** ELF `e_machine` values of the targets. */
const ELF_MACHINES: Record<number, Target> = {
  0x3e: "x86_64-unknown-linux-gnu",
  0xb7: "aarch64-unknown-linux-gnu",
};

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
 * Checks the targets asked for, or picks the defaults: both, or with
 * `denort` (`DENORT_BIN`) the one target that file is for.
 *
 * @throws {BuildError} naming an unknown target, an unreadable `denort`, or
 * a target that `denort` cannot build.
 */
export async function chooseTargets(
  asked: readonly string[],
  denort?: string,
): Promise<Target[]> {
  const unknown = asked.filter((t) => !(TARGETS as readonly string[]).includes(t));
  if (unknown.length) {
    throw new BuildError(
      `Cannot build the target ${unknown.join(", ")}: expected ${TARGETS.join(" or ")}`,
    );
  }
  const targets = asked.length ? [...new Set(asked as Target[])] : [...TARGETS];
  if (denort === undefined) return targets;
  let target: Target | undefined;
  try {
    target = await elfTarget(denort);
  } catch (error) {
    throw new BuildError(`DENORT_BIN=${denort} cannot be read: ${(error as Error).message}`);
  }
  if (!target) {
    throw new BuildError(
      `DENORT_BIN=${denort} is not a Linux executable for ${TARGETS.join(" or ")}`,
    );
  }
  if (!asked.length) return [target];
  const others = targets.filter((t) => t !== target);
  if (others.length) {
    throw new BuildError(
      `DENORT_BIN=${denort} is a denort for ${target}, so it cannot build ` +
        `${others.join(", ")}: build one target per DENORT_BIN`,
    );
  }
  return targets;
}

/** What {@link compileArgs} compiles. */
export interface CompileArgsOptions {
  /** The machine the binary is for. */
  target: Target;
  /** The binary to write. */
  output: string;
  /** The bundle's entry. */
  entry: string;
  /** The grants baked into the binary. */
  grants: Grants;
}

/**
 * The `deno compile` arguments that build `target` into `output` from the
 * bundle. The bundle holds the npm code the operator uses;
 * `--exclude-unused-npm` keeps the packages of deno.json's imports that only
 * the benchmark or the types use (`@kubernetes/client-node`) out of the binary.
 */
export function compileArgs(options: CompileArgsOptions): string[] {
  return [
    "compile",
    ...denoFlags(options.grants),
    "--exclude-unused-npm",
    "--target",
    options.target,
    "--output",
    options.output,
    options.entry,
  ];
}

/** Where `deno compile` gets denort for a target from. */
export type DenortSource =
  | { kind: "file"; path: string }
  | { kind: "cached"; path: string }
  | { kind: "download"; url: string }
  | { kind: "missing"; advice: string };

/** Options of {@link findDenort}. */
export interface FindDenortOptions {
  /** `DENORT_BIN`, resolved; it wins over everything else. */
  denort?: string;
  /** Whether denort may be downloaded when dl.deno.land answers. Defaults to true. */
  download?: boolean;
  /** How long to wait for dl.deno.land before calling it unreachable. Defaults to 5000 ms. */
  probeTimeoutMs?: number;
}

/**
 * Where denort for `target` comes from: `DENORT_BIN`, the zip in Deno's
 * cache, or a download that dl.deno.land answers; otherwise what to do to
 * get it, as {@link DenortSource} `missing`.
 */
export async function findDenort(
  target: Target,
  options: FindDenortOptions = {},
): Promise<DenortSource> {
  if (options.denort !== undefined) return { kind: "file", path: options.denort };
  const version = Deno.version.deno;
  const zip = `denort-${target}.zip`;
  const folder = join(await denoDir(), "dl", "release", `v${version}`);
  const cached = join(folder, zip);
  if (await Deno.stat(cached).then((s) => s.isFile, () => false)) {
    return { kind: "cached", path: cached };
  }
  const url = `https://dl.deno.land/release/v${version}/${zip}`;
  if (options.download !== false && await answers(url, options.probeTimeoutMs ?? 5000)) {
    return { kind: "download", url };
  }
  return {
    kind: "missing",
    advice: [
      `no denort ${version} for ${target}, the runtime deno compile builds every binary on:`,
      `DENORT_BIN is unset, ${cached} is missing,`,
      `and ${url} ${
        options.download === false ? "may not be downloaded (offline)" : "is unreachable"
      }. Either`,
      `  - put ${zip} from that address into ${folder}/, or`,
      "  - unzip it and set DENORT_BIN to the denort inside (one target per build);",
      `it must be exactly Deno ${version}, the Deno that builds.`,
    ].join("\n"),
  };
}

async function answers(url: string, timeoutMs: number): Promise<boolean> {
  try {
    const response = await fetch(url, {
      method: "HEAD",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
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

/** Options of {@link compile}. */
export interface CompileOptions extends CompileArgsOptions {
  /** Where `deno compile` runs: the project's root. */
  root: string;
  /** The environment to compile in. Defaults to this process's. */
  env?: Record<string, string>;
  /** `DENORT_BIN`, resolved. */
  denort?: string;
}

/**
 * Runs `deno compile` for one target, its output passed through to this
 * process's stderr, in `env` plus {@link runtimeEnv} (deno compile bakes the
 * certificate stores it is started with into the binary).
 *
 * @returns the size of the binary in bytes.
 * @throws {BuildError} when `deno compile` fails; when it could not get
 * denort, the message says how to provide it.
 */
export async function compile(options: CompileOptions): Promise<number> {
  const env = options.env ?? Deno.env.toObject();
  const { DENORT_BIN: _, ...rest } = env;
  const base = { ...rest, ...runtimeEnv(env) };
  const result = await new Deno.Command(Deno.execPath(), {
    args: compileArgs(options),
    cwd: options.root,
    // An empty DENORT_BIN (an unset build argument) must not reach Deno, which would read ''.
    clearEnv: true,
    env: options.denort ? { ...base, DENORT_BIN: options.denort } : base,
    stdout: "inherit",
    stderr: "piped",
  }).output();
  Deno.stderr.writeSync(result.stderr);
  if (!result.success) {
    const stderr = new TextDecoder().decode(result.stderr);
    const missing = /dl\.deno\.land|Setting up base binary|Could not find denort/.test(stderr);
    const advice = missing
      ? await findDenort(options.target, { download: false, denort: undefined })
      : undefined;
    throw new BuildError(
      `deno compile could not build ${options.target}` +
        (advice?.kind === "missing" ? `: ${advice.advice}` : " (its output is above)"),
    );
  }
  return (await Deno.stat(options.output)).size;
}
