/**
 * The checks of `defineKind`'s options that every version of a kind
 * shares: its CEL rules, printer columns and scale subresource, each
 * refused with a `RangeError` naming the option and the value, or returned
 * as the CRD holds it; and the report of what its schemas check that the
 * CRD cannot carry, as its `unenforced` option asks.
 *
 * @module
 */
import { refuse } from "./names.ts";
import type {
  CelRule,
  JsonSchema,
  PrinterColumn,
  ScaleSubresource,
  UnenforcedConstraint,
} from "./types.ts";

const COLUMN_TYPES = new Set(["string", "integer", "number", "boolean", "date"]);

/** `rule`, checked: a CEL expression, a message, a field path starting with `.`. */
export function celRule(kind: string, rule: CelRule, i: number): CelRule {
  if (typeof rule?.rule !== "string" || rule.rule.trim() === "") {
    refuse(kind, `validations[${i}].rule`, rule?.rule, "a CEL expression");
  }
  if (typeof rule.message !== "string" || rule.message === "") {
    refuse(kind, `validations[${i}].message`, rule.message, "the text of a refusal");
  }
  if (rule.fieldPath !== undefined && !rule.fieldPath.startsWith(".")) {
    refuse(kind, `validations[${i}].fieldPath`, rule.fieldPath, "a path starting with '.'");
  }
  return { ...rule };
}

/** `column`, checked: a heading, a type kubectl knows, a path, a priority. */
export function printerColumn(kind: string, column: PrinterColumn, i: number): PrinterColumn {
  if (typeof column?.name !== "string" || column.name === "") {
    refuse(kind, `printerColumns[${i}].name`, column?.name, "a heading");
  }
  if (!COLUMN_TYPES.has(column.type)) {
    refuse(kind, `printerColumns[${i}].type`, column.type, [...COLUMN_TYPES].join(", "));
  }
  if (typeof column.jsonPath !== "string" || !column.jsonPath.startsWith(".")) {
    refuse(kind, `printerColumns[${i}].jsonPath`, column.jsonPath, "a path starting with '.'");
  }
  if (
    column.priority !== undefined && (!Number.isInteger(column.priority) || column.priority < 0)
  ) {
    refuse(kind, `printerColumns[${i}].priority`, column.priority, "a non-negative integer");
  }
  return { ...column };
}

/**
 * The scale subresource with its defaults; takes `minimum: 0` off the spec
 * replicas, which the API server checks itself for a kind that scales.
 */
export function scaleSubresource(
  kind: string,
  scale: Partial<ScaleSubresource>,
  root: JsonSchema,
): ScaleSubresource {
  const specReplicasPath = scale.specReplicasPath ?? ".spec.replicas";
  const statusReplicasPath = scale.statusReplicasPath ?? ".status.replicas";
  const { labelSelectorPath } = scale;
  if (!specReplicasPath.startsWith(".spec.")) {
    refuse(kind, "scale.specReplicasPath", specReplicasPath, "a path under .spec");
  }
  if (!statusReplicasPath.startsWith(".status.")) {
    refuse(kind, "scale.statusReplicasPath", statusReplicasPath, "a path under .status");
  }
  if (labelSelectorPath !== undefined && !/^\.(spec|status)\./.test(labelSelectorPath)) {
    refuse(kind, "scale.labelSelectorPath", labelSelectorPath, "a path under .status or .spec");
  }
  let node: JsonSchema | undefined = root;
  for (const name of specReplicasPath.slice(1).split(".")) {
    node = (node?.properties as Record<string, JsonSchema> | undefined)?.[name];
  }
  if (node?.minimum === 0) delete node.minimum;
  return {
    specReplicasPath,
    statusReplicasPath,
    ...(labelSelectorPath !== undefined && { labelSelectorPath }),
  };
}

/** Writes or throws what the CRD leaves out, as `mode` (`defineKind`'s `unenforced`) asks. */
export function reportUnenforced(
  kind: string,
  unenforced: readonly UnenforcedConstraint[],
  mode: "warn" | "error" | "ignore",
): void {
  if (mode !== "warn" && mode !== "error" && mode !== "ignore") {
    refuse(kind, "unenforced", mode, "warn, error or ignore");
  }
  if (unenforced.length === 0 || mode === "ignore") return;
  const lines = unenforced.map(({ path, constraint, advice }) =>
    `  ${path}: ${constraint}; ${advice}`
  );
  const count = unenforced.length === 1
    ? "a zod constraint"
    : `${unenforced.length} zod constraints`;
  if (mode === "error") {
    throw new TypeError(
      `Cannot define the kind ${kind}: the API server would not enforce ${count} of its ` +
        `schema:\n${lines.join("\n")}`,
    );
  }
  // deno-lint-ignore no-console -- at definition, before any logging is set up, and never silent
  console.warn(
    `The CRD of ${kind} leaves out ${count}; the API server accepts objects that break ` +
      `${unenforced.length === 1 ? "it" : "them"}:\n${lines.join("\n")}\n` +
      `(defineKind's 'unenforced: "error"' refuses such a schema, "ignore" silences this)`,
  );
}
