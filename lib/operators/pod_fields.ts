/**
 * The pod-level fields the kinds share (environment, compute resources, node
 * placement): the checks the API server would only make when a pod is
 * created (too late for a useful error), and their rendering into core API
 * types. Their zod schemas are in `schema/pod_fields.ts`.
 *
 * @example
 * ```ts
 * import { checkResources } from "./pod_fields.ts";
 * checkResources({ requests: { cpu: "2" }, limits: { cpu: "1" } }, ["resources"])[0]?.message;
 * // "request 2 exceeds the limit 1; pods would be rejected"
 * ```
 *
 * @module
 */
import type { V1EnvVar, V1ResourceRequirements, V1Toleration } from "./models.ts";
import type { EnvVar, Resources, Toleration } from "./schema/pod_fields.ts";

export type { EnvVar, Resources, Toleration };
import { type FieldPath, formatPath, type Problem } from "./validation.ts";
import { parseQuantity, type Quantity, quantityString } from "./quantity.ts";

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Environment names are unique (server-side apply rejects duplicate list-map
 * keys) and free of `=`, and each variable has either a value or one source.
 *
 * @example
 * ```ts
 * import { checkEnv } from "./pod_fields.ts";
 * checkEnv([{ name: "A", value: "1" }, { name: "A", value: "2" }], ["env"]).length; // 1
 * ```
 */
export function checkEnv(env: readonly EnvVar[] | undefined, at: FieldPath): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  env?.forEach((variable, i) => {
    const first = seen.get(variable.name);
    if (first !== undefined) {
      problems.push({
        path: [...at, i, "name"],
        message: `${JSON.stringify(variable.name)} is already set by ${formatPath([...at, first])}`,
      });
    } else seen.set(variable.name, i);
    if (variable.name.includes("=")) {
      problems.push({ path: [...at, i, "name"], message: "must not contain '='" });
    }
    const sources = Object.values(variable.valueFrom ?? {}).filter(Boolean).length;
    if (variable.valueFrom && sources !== 1) {
      problems.push({
        path: [...at, i, "valueFrom"],
        message: "must set exactly one of secretKeyRef and configMapKeyRef",
      });
    }
    if (variable.value !== undefined && variable.valueFrom) {
      problems.push({ path: [...at, i], message: "set value or valueFrom, not both" });
    }
  });
  return problems;
}

/**
 * No request exceeds its limit: the ReplicaSet or StatefulSet controller
 * would fail to create pods, and only its Events would say so.
 *
 * @example
 * ```ts
 * import { checkResources } from "./pod_fields.ts";
 * checkResources({ requests: { memory: "1Gi" }, limits: { memory: "2Gi" } }, ["resources"]); // []
 * ```
 */
export function checkResources(resources: Resources | undefined, at: FieldPath): Problem[] {
  const problems: Problem[] = [];
  for (const name of ["cpu", "memory"] as const) {
    const request = resources?.requests?.[name];
    const limit = resources?.limits?.[name];
    if (request === undefined || limit === undefined) continue;
    if (parseQuantity(request) > parseQuantity(limit)) {
      problems.push({
        path: [...at, "requests", name],
        message: `request ${request} exceeds the limit ${limit}; pods would be rejected`,
      });
    }
  }
  return problems;
}

/**
 * Tolerations obey the core API's rules, checked there only at pod creation.
 *
 * @example
 * ```ts
 * import { checkTolerations } from "./pod_fields.ts";
 * checkTolerations([{ operator: "Exists", value: "x" }], ["tolerations"])[0]?.message;
 * // "must be empty when operator is Exists"
 * ```
 */
export function checkTolerations(
  tolerations: readonly Toleration[] | undefined,
  at: FieldPath,
): Problem[] {
  const problems: Problem[] = [];
  tolerations?.forEach((toleration, i) => {
    const exists = toleration.operator === "Exists";
    if (exists && toleration.value) {
      problems.push({
        path: [...at, i, "value"],
        message: "must be empty when operator is Exists",
      });
    }
    if (!toleration.key && !exists) {
      problems.push({
        path: [...at, i, "operator"],
        message: "must be Exists when key is empty (an empty key matches every taint)",
      });
    }
    if (toleration.tolerationSeconds !== undefined && toleration.effect !== "NoExecute") {
      problems.push({
        path: [...at, i, "tolerationSeconds"],
        message: "applies only to effect NoExecute",
      });
    }
    if (toleration.value && !LABEL_VALUE.test(toleration.value)) {
      problems.push({ path: [...at, i, "value"], message: labelValueHint(toleration.value) });
    }
  });
  return problems;
}

/**
 * Node selector keys are label keys and values are label values.
 *
 * @example
 * ```ts
 * import { checkNodeSelector } from "./pod_fields.ts";
 * checkNodeSelector({ "kubernetes.io/arch": "arm64" }, ["nodeSelector"]); // []
 * ```
 */
export function checkNodeSelector(
  selector: Readonly<Record<string, string>> | undefined,
  at: FieldPath,
): Problem[] {
  const problems: Problem[] = [];
  for (const [key, value] of Object.entries(selector ?? {})) {
    if (!isLabelKey(key)) {
      problems.push({
        path: [...at, key],
        message: "is not a label key: use an optional DNS subdomain prefix and '/', then a name " +
          "of at most 63 letters, digits, '-', '_' or '.'",
      });
    }
    if (!LABEL_VALUE.test(value) || value.length > 63) {
      problems.push({ path: [...at, key], message: labelValueHint(value) });
    }
  }
  return problems;
}

/**
 * Spec environment as container environment.
 *
 * @example
 * ```ts
 * import { containerEnv } from "./pod_fields.ts";
 * containerEnv([{ name: "MODE", value: "prod" }]); // [{ name: "MODE", value: "prod" }]
 * ```
 */
export function containerEnv(env: readonly EnvVar[] | undefined): V1EnvVar[] {
  return (env ?? []).map(({ name, value, valueFrom }) => ({
    name,
    ...(value === undefined ? {} : { value }),
    ...(valueFrom ? { valueFrom } : {}),
  }));
}

/**
 * Spec resources as container resources, quantities as strings; extra
 * limits (e.g. `nvidia.com/gpu`) are merged in.
 *
 * @example
 * ```ts
 * import { containerResources } from "./pod_fields.ts";
 * containerResources({ limits: { cpu: 2 } }, { "nvidia.com/gpu": "1" });
 * // { limits: { cpu: "2", "nvidia.com/gpu": "1" } }
 * ```
 */
export function containerResources(
  resources: Resources | undefined,
  extraLimits: Record<string, string> = {},
): V1ResourceRequirements {
  const requests = quantities(resources?.requests);
  const limits = { ...quantities(resources?.limits), ...extraLimits };
  return {
    ...(Object.keys(requests).length ? { requests } : {}),
    ...(Object.keys(limits).length ? { limits } : {}),
  };
}

/**
 * Spec tolerations as core tolerations, without unset fields.
 *
 * @example
 * ```ts
 * import { podTolerations } from "./pod_fields.ts";
 * podTolerations([{ key: "edge", operator: "Exists" }]); // [{ key: "edge", operator: "Exists" }]
 * ```
 */
export function podTolerations(tolerations: readonly Toleration[] | undefined): V1Toleration[] {
  return (tolerations ?? []).map((toleration) =>
    Object.fromEntries(Object.entries(toleration).filter(([, value]) => value !== undefined))
  );
}

function quantities(
  values: Partial<Record<"cpu" | "memory", Quantity>> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(values ?? {})) {
    if (value !== undefined) out[name] = quantityString(value);
  }
  return out;
}

function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf("/");
  const prefix = slash === -1 ? undefined : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) return false;
  return name.length <= 63 && LABEL_NAME.test(name);
}

function labelValueHint(value: string): string {
  return `${JSON.stringify(value)} is not a label value: use at most 63 letters, digits, ` +
    "'-', '_' or '.', starting and ending with a letter or digit";
}
