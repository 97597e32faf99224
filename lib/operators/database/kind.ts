/**
 * The `DatabaseCluster` kind at run time: its resource, its object type and
 * the validation of a stored spec, with no zod loaded (the schema is in
 * `schema.ts`; the checks use the spec schema generated from it).
 *
 * @example
 * ```ts
 * import { validateDatabaseCluster } from "./kind.ts";
 * const result = validateDatabaseCluster({ engine: "mysql", version: "5.7", storage: { size: "1Gi" } });
 * if (!result.ok) result.message;
 * // 'spec.version: "5.7" is not a supported mysql version; use 8.0 or 8.4, optionally with a patch (e.g. 8.4.3), or set spec.image'
 * ```
 *
 * @module
 */
import type { V1ObjectMeta } from "../models.ts";
import type { KubeObject } from "../../kube/mod.ts";
import { DATABASE_CLUSTER_SPEC } from "../_spec_schemas.ts";
import { checkResources } from "../pod_fields.ts";
import { parseQuantity } from "../quantity.ts";
import { type Problem, validateSpec, type Validation } from "../validation.ts";
import { ENGINES, isSupportedVersion } from "./engines.ts";
import type { DatabaseSpec, DatabaseStatus } from "./schema.ts";

export type { DatabaseSpec, DatabaseStatus };
export { DATABASE_CLUSTERS } from "../api_group.ts";

/**
 * A DatabaseCluster object in the storage version (`v1alpha2`, which the
 * controller watches) whose spec passed {@link validateDatabaseCluster}.
 */
export interface DatabaseCluster extends KubeObject {
  metadata: V1ObjectMeta;
  spec: DatabaseSpec;
  status?: DatabaseStatus;
}

/**
 * Parses a stored spec and checks what the CRD schema cannot: a version
 * kinglet supports for the engine (unless `image` overrides it), a non-zero
 * volume size and requests within limits.
 *
 * @example
 * ```ts
 * import { validateDatabaseCluster } from "./kind.ts";
 * validateDatabaseCluster({ engine: "postgres", version: "17", storage: { size: "10Gi" } }).ok; // true
 * ```
 */
export function validateDatabaseCluster(spec: unknown): Validation<DatabaseSpec> {
  return validateSpec<DatabaseSpec>(DATABASE_CLUSTER_SPEC, spec, (parsed) => {
    const problems: Problem[] = [];
    if (parsed.image === undefined && !isSupportedVersion(parsed.engine, parsed.version)) {
      const engine = ENGINES[parsed.engine];
      const majors = engine.versions.slice(0, -1).join(", ") + " or " + engine.versions.at(-1);
      problems.push({
        path: ["version"],
        message: `${JSON.stringify(parsed.version)} is not a supported ${parsed.engine} ` +
          `version; use ${majors}, optionally with a ${
            parsed.engine === "mysql" ? "patch" : "minor"
          } (e.g. ${engine.example}), or set spec.image`,
      });
    }
    if (parseQuantity(parsed.storage.size) === 0) {
      problems.push({ path: ["storage", "size"], message: "must be greater than zero" });
    }
    problems.push(...checkResources(parsed.resources, ["resources"]));
    return problems;
  });
}
