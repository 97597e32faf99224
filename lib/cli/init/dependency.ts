/**
 * Where a generated project finds kinglet: the import map of "Depend on
 * kinglet" in docs/writing-operators.md, the `@kinglet/kinglet/*` names pointed at a copy of
 * kinglet's sources, vendored into the project (the default,
 * `./vendor/kinglet`), anywhere on disk (`--kinglet ../kinglet`), or at a URL
 * (`--kinglet https://raw.githubusercontent.com/<owner>/kinglet/<tag>`).
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
import { UsageError } from "../flags.ts";

/** Where kinglet goes when `--kinglet` is not given: the vendored copy of "Depend on kinglet". */
export const VENDORED = "./vendor/kinglet";

/** The public modules of kinglet, by the name a project imports them under. */
const MODULES = {
  "@kinglet/kinglet/kube": "lib/kube/mod.ts",
  "@kinglet/kinglet/runtime": "lib/runtime/mod.ts",
  "@kinglet/kinglet/async": "lib/async/mod.ts",
  "@kinglet/kinglet/crd": "lib/crd/mod.ts",
  "@kinglet/kinglet/testing": "lib/testing/mod.ts",
  "@kinglet/kinglet/deploy": "lib/deploy/mod.ts",
} as const;

/** The npm packages a project names: zod for its schemas, yaml for `deno task crds`. */
const PACKAGES = ["zod", "@kubernetes/client-node", "yaml"] as const;

/**
 * The project's import map: kinglet's five modules under `location` (a path
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
  /** The absolute path of a local copy, when `--kinglet` named one. */
  path?: string;
}

/**
 * Resolves `--kinglet` for a project at `projectDir`: a URL is kept, a path
 * must hold kinglet's sources and is written relative to the project.
 *
 * @throws {UsageError} when the path holds no `lib/kube/mod.ts`.
 */
export async function locateKinglet(
  given: string | undefined,
  projectDir: string,
): Promise<KingletLocation> {
  if (!given) return { spec: VENDORED };
  if (/^https?:\/\//.test(given)) return { spec: given.replace(/\/+$/, "") };
  const path = resolve(given);
  const probe = join(path, MODULES["@kinglet/kinglet/kube"]);
  const found = await Deno.stat(probe).then((s) => s.isFile, () => false);
  if (!found) {
    throw new UsageError(
      `--kinglet ${given} holds no kinglet sources (no ${probe}): name a checkout or a ` +
        `tag of kinglet's repository, a folder with lib/kube/mod.ts, or an https:// URL of one`,
    );
  }
  const rel = relative(resolve(projectDir), path) || ".";
  const spec = isAbsolute(rel) || rel.startsWith("../") || rel === ".." ? rel : `./${rel}`;
  return { spec, path };
}
