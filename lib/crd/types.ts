/**
 * The shapes of a CustomResourceDefinition as {@link defineKind} writes it:
 * the object itself, its printer columns, CEL rules and scale subresource,
 * and the annotation that carries its schema hash. This module loads nothing
 * (no zod), so a program that only installs or checks CRDs may import it.
 *
 * @example
 * ```ts
 * import type { PrinterColumn } from "./types.ts";
 * const age: PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };
 * ```
 *
 * @module
 */
import type { KubeObject } from "../kube/mod.ts";

/**
 * A zod v4 schema, as far as this module relies on it: the type its parse
 * returns, where `z.output` reads it too. Any `z.ZodType` is one, whichever
 * copy of zod v4 made it.
 */
export interface ZodSchema<Output = unknown> {
  /** zod's internals; only the output type is read. */
  readonly _zod: { readonly output: Output };
}

/**
 * A zod v4 schema of a field a `z.object` may leave out, as `.optional()`
 * makes one, as far as this module relies on it: the field's type, and the
 * marks by which zod (any copy of v4) infers its key as optional.
 */
export interface OptionalZodSchema<Output = unknown> {
  /** zod's internals: the field's type, and the marks of an optional key. */
  readonly _zod: {
    readonly output: Output | undefined;
    readonly input: Output | undefined;
    readonly optin: "optional" | "defaulted";
    readonly optout: "optional";
  };
}

/** A JSON Schema node as the API server reads it (extensions keep their `x-` names). */
export type JsonSchema = { [keyword: string]: unknown };

/**
 * A constraint a zod schema checks that the CRD made from it does not carry:
 * the API server accepts objects that break it. `defineKind` reports each
 * (see its `unenforced` option); where the CRD can carry one, it does.
 */
export interface UnenforcedConstraint {
  /** Where, from the object's root, e.g. `.spec.nodeSelector`; `{}` stands for a map's values. */
  path: string;
  /** What zod checks there, e.g. `a refinement ("must select a label")`. */
  constraint: string;
  /** What to do so that the API server or the reconcile enforces it. */
  advice: string;
}

/** A column of `kubectl get`. */
export interface PrinterColumn {
  /** The column's heading, e.g. `Ready`. */
  name: string;
  /** How `kubectl` formats the value; `date` shows an age. */
  type: "string" | "integer" | "number" | "boolean" | "date";
  /** Where the value is, e.g. `.status.readyReplicas`. */
  jsonPath: string;
  /** What the column means, for `kubectl explain` and OpenAPI clients. */
  description?: string;
  /** 0 shows in `kubectl get`, 1 and more only with `-o wide`. Defaults to 0. */
  priority?: number;
}

/**
 * A CEL validation rule (`x-kubernetes-validations`), checked by the API
 * server at admission. On a field, set it with zod's `.meta()`:
 * `z.string().meta({ "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "..." }] })`.
 */
export interface CelRule {
  /** The CEL expression; `self` is the value, `oldSelf` its previous value on updates. */
  rule: string;
  /** What a refusal says. */
  message: string;
  /**
   * The field a refusal names, relative to the schema holding the rule, e.g.
   * `.metadata.name`; without it a rule on the root is reported as `<nil>`.
   */
  fieldPath?: string;
  /** The refusal's reason: `FieldValueInvalid` (the default), `FieldValueForbidden`, ... */
  reason?:
    | "FieldValueInvalid"
    | "FieldValueForbidden"
    | "FieldValueRequired"
    | "FieldValueDuplicate";
}

/** Where the scale subresource (`kubectl scale`, autoscalers) reads and writes replicas. */
export interface ScaleSubresource {
  /** The desired replicas, under `.spec`. */
  specReplicasPath: string;
  /** The observed replicas, under `.status`. */
  statusReplicasPath: string;
  /** The pods' label selector as a string, under `.status` or `.spec`; autoscalers need it. */
  labelSelectorPath?: string;
}

/**
 * A CRD's `spec.conversion`: `None` when its versions share one schema, or
 * the webhook the API server calls to convert between them.
 */
export type CrdConversion =
  | { strategy: "None" }
  | {
    strategy: "Webhook";
    webhook: {
      /** The ConversionReview versions the webhook understands: `["v1"]`. */
      conversionReviewVersions: string[];
      /** Where the webhook is: a URL, or a Service; and the CA bundle that signs its certificate. */
      clientConfig: {
        url?: string;
        service?: { namespace: string; name: string; path?: string; port?: number };
        caBundle?: string;
      };
    };
  };

/** The CustomResourceDefinition object, with schema extensions spelled as in YAML. */
export interface CustomResourceDefinition extends KubeObject {
  /** Always `apiextensions.k8s.io/v1`. */
  apiVersion: "apiextensions.k8s.io/v1";
  /** Always `CustomResourceDefinition`. */
  kind: "CustomResourceDefinition";
  /** `<plural>.<group>`, with the labels asked for and the schema hash once added. */
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  /** Group, scope, names, the versions, and how they convert when there are several. */
  spec: {
    group: string;
    scope: "Namespaced" | "Cluster";
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: Record<string, never>; scale?: ScaleSubresource };
      additionalPrinterColumns?: PrinterColumn[];
      schema: { openAPIV3Schema: JsonSchema };
    }[];
    /** Absent for a kind of one version. */
    conversion?: CrdConversion;
  };
}

/**
 * The annotation that carries a CRD's schema hash (see `withSchemaHash`), so
 * that an operator can tell whether the CRD in the cluster is the one it was
 * built with by reading one annotation.
 */
export const SCHEMA_HASH_ANNOTATION = "kinglet.dev/schema-hash";
