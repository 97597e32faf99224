/**
 * The files of a project `kinglet init` writes, by path: a pure function of
 * the names and of where kinglet is, so that what is generated is tested
 * without writing anything.
 *
 * @example
 * ```ts
 * import { projectFiles } from "./project.ts";
 * import { projectNames } from "./names.ts";
 * const files = projectFiles(projectNames({ group: "example.dev", kind: "Mirror" }), {
 *   source: "../kinglet",
 * });
 * files.has("src/schema.ts"); // true
 * ```
 *
 * @module
 */
import { type KingletRecord, kingletRecordJson } from "../../build/vendor.ts";
import { benchScriptTs, benchTarget, denoJson, gitignore } from "./config_files.ts";
import type { ProjectNames } from "./names.ts";
import { shippingFiles } from "./deploy_files.ts";
import { readmeMd } from "./readme.ts";
import { controllerTs, crdsScriptTs, kindTs, mainTs, schemaTs } from "./source_files.ts";
import { e2eTestTs, kingletTestTs, unitTestTs } from "./test_files.ts";

/**
 * Every file of the project, by its path relative to the project's folder,
 * for an import map that finds the kinglet of `kinglet` at its `source` (see
 * `dependency.ts`); the copy of a vendored kinglet is not among them.
 */
export function projectFiles(names: ProjectNames, kinglet: KingletRecord): Map<string, string> {
  return new Map([
    ["deno.json", denoJson(kinglet.source, names)],
    ["kinglet.json", kingletRecordJson(kinglet)],
    ["README.md", readmeMd(names, kinglet)],
    [".gitignore", gitignore()],
    ["main.ts", mainTs(names)],
    ["src/kind.ts", kindTs(names)],
    ["src/schema.ts", schemaTs(names)],
    ["src/controller.ts", controllerTs(names)],
    ["scripts/crds.ts", crdsScriptTs(names)],
    ["tests/unit/controller_test.ts", unitTestTs(names)],
    ["tests/e2e/operator_test.ts", e2eTestTs(names)],
    ["bench/target.json", benchTarget(names)],
    ["scripts/bench.ts", benchScriptTs()],
    ...shippingFiles(names),
    ...(kinglet.sha256 ? [["tests/unit/kinglet_test.ts", kingletTestTs()] as const] : []),
  ]);
}
