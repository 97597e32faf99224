/**
 * Where a generated project finds kinglet: the import map of "Depend on
 * kinglet" in docs/writing-operators.md, the `@kinglet/kinglet/*` names
 * pointed at a copy of the files kinglet publishes, vendored into the project
 * from the kinglet `init` runs from (the default, `./vendor/kinglet`),
 * anywhere on disk (`--kinglet ../kinglet`), or at a URL (`--kinglet
 * https://raw.githubusercontent.com/<owner>/kinglet/<commit>`); the record
 * of which kinglet that is, the project's `kinglet.json`; and what its README
 * says of it.
 *
 * The npm packages beside them are the versions kinglet's own `deno.json`
 * pins, so that the project's schemas and `./crd` share one copy of zod.
 *
 * @example
 * ```ts
 * import { importMap } from "./dependency.ts";
 * importMap("./vendor/kinglet")["@kinglet/kinglet/crd"]; // "./vendor/kinglet/lib/crd/mod.ts"
 * ```
 *
 * @module
 */
import { isAbsolute, join, relative, resolve } from "node:path";
import meta from "../../../deno.json" with { type: "json" };
import {
  KINGLET_FILES,
  KINGLET_ROOT,
  kingletDigest,
  type KingletRecord,
  kingletRevision,
  VENDOR_DIR,
} from "../../build/vendor.ts";
import { UsageError } from "../flags.ts";

/** Where kinglet goes when `--kinglet` is not given: the vendored copy of "Depend on kinglet". */
export const VENDORED = "./vendor/kinglet";

/**
 * The public modules of kinglet, by the name a project imports them under:
 * every export of kinglet's `deno.json` but its command line (`.`), so that
 * a project maps exactly what kinglet publishes.
 */
export const MODULES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(meta.exports)
    .filter(([name]) => name !== ".")
    .map(([name, path]) => [`@kinglet/kinglet/${name.slice(2)}`, path.slice(2)]),
);

/** The npm packages a project names: zod for its schemas, yaml for `deno task crds`. */
const PACKAGES = ["zod", "@kubernetes/client-node", "yaml"] as const;

/**
 * The project's import map: kinglet's modules under `location` (a path
 * starting with `./` or `../`, relative to the project, or a URL), and the
 * npm packages at kinglet's versions.
 */
export function importMap(location: string): Record<string, string> {
  const base = location.replace(/\/+$/, "");
  const map: Record<string, string> = {};
  for (const [name, path] of Object.entries(MODULES)) map[name] = `${base}/${path}`;
  for (const name of PACKAGES) map[name] = meta.imports[name];
  return map;
}

/** Where kinglet is, as the project's files spell it and, when on this disk, as a path. */
export interface KingletLocation {
  /** How `deno.json` and the tasks name it: `./vendor/kinglet`, `../kinglet`, or a URL. */
  spec: string;
  /** The absolute path of the kinglet on this disk: the one `--kinglet` named, or the one vendored. */
  path?: string;
  /** Which kinglet it is, as the project's `kinglet.json` records it. */
  record: KingletRecord;
}

/**
 * Resolves `--kinglet` for a project at `projectDir`: unset, the kinglet
 * init runs from, to be vendored; a URL is kept; a path must hold kinglet's
 * sources and is written relative to the project.
 *
 * @throws {UsageError} when the path holds no `lib/kube/mod.ts`, or, unset,
 * when init runs from no sources on this disk.
 */
export async function locateKinglet(
  given: string | undefined,
  projectDir: string,
): Promise<KingletLocation> {
  if (!given) {
    let sha256: string;
    try {
      sha256 = await kingletDigest(KINGLET_ROOT);
    } catch (error) {
      const absent = error instanceof Deno.errors.NotFound ||
        error instanceof Deno.errors.NotCapable;
      if (!absent) throw error;
      throw new UsageError(
        `kinglet init vendors the kinglet it runs from, whose sources are not on this disk ` +
          `(${KINGLET_ROOT}): run it from a checkout (deno run -A <checkout>/main.ts init ...), ` +
          "or name one with --kinglet <path or https:// URL>",
      );
    }
    const record = { ...await kingletRevision(KINGLET_ROOT), source: VENDORED, sha256 };
    return { spec: VENDORED, path: KINGLET_ROOT, record };
  }
  if (/^https?:\/\//.test(given)) {
    const spec = given.replace(/\/+$/, "");
    return { spec, record: { source: spec } };
  }
  const path = resolve(given);
  const probe = join(path, MODULES["@kinglet/kinglet/kube"]!);
  const found = await Deno.stat(probe).then((s) => s.isFile, () => false);
  if (!found) {
    throw new UsageError(
      `--kinglet ${given} holds no kinglet sources (no ${probe}): name a checkout of ` +
        `kinglet's repository, a folder with lib/kube/mod.ts, or an https:// URL of one`,
    );
  }
  const rel = relative(resolve(projectDir), path) || ".";
  const spec = isAbsolute(rel) || rel.startsWith("../") || rel === ".." ? rel : `./${rel}`;
  return { spec, path, record: { ...await kingletRevision(path), source: spec } };
}

/**
 * The paragraph of the project's README on the kinglet its import map names:
 * the path or URL `--kinglet` named, or the vendored copy, how it is pinned,
 * and how to get it back or replace it.
 */
export function kingletParagraph(kinglet: KingletRecord): string {
  const { version, commit, source } = kinglet;
  if (!kinglet.sha256) {
    const at = commit ? ` at commit \`${commit}\`` : "";
    const which = version
      ? `, kinglet ${version}${at} when \`kinglet init\` wrote this project`
      : "";
    return `The import map names kinglet's sources at \`${source}\`${which}, as ` +
      "`kinglet init --kinglet` was told.";
  }
  const files = KINGLET_FILES.map((path) => path.replace(/\/$/, "")).join(" ");
  const from = !commit
    ? `kinglet ${version} (not from a git checkout: its SHA-256 alone pins it)`
    : kinglet.uncommitted
    ? `kinglet ${version} at commit \`${commit}\` with changes not committed (its SHA-256 alone ` +
      "pins it)"
    : `kinglet ${version} at commit \`${commit}\``;
  return [
    `\`${VENDOR_DIR}\` is a copy of the files kinglet publishes, vendored by \`kinglet init\` ` +
    `from ${from}. Commit it with the project.`,
    "`kinglet.json` holds the SHA-256 of the copy's paths and contents beside its version and " +
    "commit, and `tests/unit/kinglet_test.ts` fails when the copy differs from it.",
    "The same copy comes back from the commit alone: `git -C <kinglet checkout> archive " +
    `${commit ?? "<commit>"} ${files} | tar -x -C ${VENDOR_DIR}\`.`,
    "To move to another kinglet, run that kinglet's vendoring here, which replaces the copy and " +
    "rewrites `kinglet.json`: `deno run --allow-read --allow-write=vendor,kinglet.json " +
    "--allow-run=git <kinglet checkout>/lib/build/vendor.ts .`",
  ].join(" ");
}
