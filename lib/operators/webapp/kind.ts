/**
 * The `WebApp` kind at run time: its resource, its object type and the
 * validation of a stored spec, with no zod loaded (the schema is in
 * `schema.ts`; the checks use the spec schema generated from it).
 *
 * @example
 * ```ts
 * import { validateWebApp } from "./kind.ts";
 * const result = validateWebApp({ image: "nginx:1.27" });
 * if (result.ok) result.spec.replicas; // 1
 * ```
 *
 * @module
 */
import type { V1ObjectMeta } from "../models.ts";
import type { KubeObject } from "../../kube/mod.ts";
import { WEB_APP_SPEC } from "../_spec_schemas.ts";
import { checkEnv, checkNodeSelector, checkResources, checkTolerations } from "../pod_fields.ts";
import { validateSpec, type Validation } from "../validation.ts";
import type { WorkloadStatus } from "../workload_status.ts";
import type { WebAppSpec } from "./schema.ts";

export type { WebAppSpec };
export { WEB_APPS } from "../api_group.ts";

/** A WebApp object whose spec passed {@link validateWebApp}. */
export interface WebApp extends KubeObject {
  metadata: V1ObjectMeta;
  spec: WebAppSpec;
  status?: WorkloadStatus;
}

/**
 * Parses a stored spec and checks what the CRD schema cannot: unique env
 * names, requests within limits, well-formed tolerations and node selectors.
 *
 * @example
 * ```ts
 * import { validateWebApp } from "./kind.ts";
 * const result = validateWebApp({ image: "nginx", port: 0 });
 * if (!result.ok) result.message; // "spec.port: must be at least 1, got 0"
 * ```
 */
export function validateWebApp(spec: unknown): Validation<WebAppSpec> {
  return validateSpec<WebAppSpec>(WEB_APP_SPEC, spec, (parsed) => [
    ...checkEnv(parsed.env, ["env"]),
    ...checkResources(parsed.resources, ["resources"]),
    ...checkNodeSelector(parsed.nodeSelector, ["nodeSelector"]),
    ...checkTolerations(parsed.tolerations, ["tolerations"]),
  ]);
}
