/**
 * The files of a project `kinglet init` writes, by path: a pure function of
 * the names and of where kinglet is, so that what is generated is tested
 * without writing anything.
 *
 * @example
 * ```ts
 * import { projectFiles } from "./project.ts";
 * import { projectNames } from "./names.ts";
 * const files = projectFiles(projectNames({ group: "example.dev", kind: "Mirror" }), "./vendor/kinglet");
 * files.has("src/schema.ts"); // true
 * ```
 *
 * @module
 */
import { benchTarget, denoJson, gitignore } from "./config_files.ts";
import type { ProjectNames } from "./names.ts";
import { shippingFiles } from "./deploy_files.ts";
import { readmeMd } from "./readme.ts";
import { controllerTs, crdsScriptTs, kindTs, mainTs, schemaTs } from "./source_files.ts";
import { e2eTestTs, unitTestTs } from "./test_files.ts";

/**
 * Every file of the project, by its path relative to the project's folder,
 * for an import map that finds kinglet at `kinglet` (see `dependency.ts`).
 */
export function projectFiles(names: ProjectNames, kinglet: string): Map<string, string> {
  return new Map([
    ["deno.json", denoJson(kinglet, names)],
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
    ...shippingFiles(names),
  ]);
}
