/**
 * A custom kind from one declaration, as `#[derive(CustomResource)]` makes it
 * in kube-rs: {@link defineKind} takes the names and the zod schemas of spec
 * and status, and gives the CRD (a structural schema, printer columns, CEL
 * rules, the status and scale subresources), the {@link Resource} the client
 * and the controller address the kind by, and, through
 * {@link CustomObject}, the TypeScript type of its objects.
 *
 * What the caller must know:
 *
 * - Every option is checked at once: a bad name, column or scale path
 *   throws a `RangeError`, and a schema the API server would refuse as not
 *   structural a `TypeError` listing every problem, before any cluster sees it.
 * - The spec type is zod's output: defaults applied, as the API server
 *   applies the CRD's defaults before anything reads the object.
 * - What zod checks and a CRD can hold, the CRD holds (a record's key
 *   constraints as a CEL rule, regex flags, several patterns); what it
 *   cannot (a refinement, a transform) the API server does not enforce:
 *   each is listed in {@link CustomKind.unenforced} with its path and what
 *   to do, written to standard error at definition, or refused with
 *   `unenforced: "error"`.
 * - This module loads zod. An operator that only runs needs the kind's
 *   `resource` and types, not zod: keep the `defineKind` call in a module of
 *   its own, import its type with `import type`, and spell the resource out
 *   beside it (or install the CRD at build time), as kinglet's own kinds do.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { type CustomObject, defineKind } from "./kind.ts";
 *
 * const backups = defineKind({
 *   group: "example.com",
 *   version: "v1",
 *   kind: "Backup",
 *   shortNames: ["bk"],
 *   spec: z.object({ schedule: z.string(), keep: z.int32().min(1).default(7) }),
 *   status: z.object({ lastRun: z.string().optional() }),
 *   printerColumns: [{ name: "Schedule", type: "string", jsonPath: ".spec.schedule" }],
 * });
 * type Backup = CustomObject<typeof backups>;
 * const backup: Backup = {
 *   metadata: { name: "nightly", namespace: "default" },
 *   spec: { schedule: "0 3 * * *", keep: 7 },
 * };
 * backups.resource.plural; // "backups"
 * backups.crd().metadata.name; // "backups.example.com"
 * ```
 *
 * @module
 */
import { type KubeObject, type ObjectMeta, type Resource, resourceName } from "../kube/mod.ts";
import type { Conversion } from "../runtime/webhook/spec.ts";
import { celRule, printerColumn, reportUnenforced, scaleSubresource } from "./_kind_checks.ts";
import { checkNames, defaultPlural, refuse } from "./names.ts";
import { structuralProblems, toKubernetesSchema, unenforcedConstraints } from "./structural.ts";
import type {
  CelRule,
  CustomResourceDefinition,
  JsonSchema,
  PrinterColumn,
  ScaleSubresource,
  UnenforcedConstraint,
  ZodSchema,
} from "./types.ts";
import {
  type CheckedVersion,
  checkVersions,
  crdConversion,
  type KindVersion,
  type StorageVersion,
  type VersionStatus,
} from "./versions.ts";

/** What every form of {@link defineKind}'s options holds: names, columns, rules, scale. */
export interface KindCommonOptions {
  /** The API group, a DNS subdomain with at least one dot, e.g. `example.com`. */
  group: string;
  /** The kind, in UpperCamelCase, e.g. `Backup`. */
  kind: string;
  /** The resource name in URLs. Defaults to the kind in lower case, pluralised (`backups`). */
  plural?: string;
  /** Defaults to the kind in lower case. */
  singular?: string;
  /** Short names for `kubectl get`, e.g. `["bk"]`. Defaults to none. */
  shortNames?: readonly string[];
  /** Groups for `kubectl get <category>`, e.g. `["all"]`. Defaults to none. */
  categories?: readonly string[];
  /** Whether objects live in namespaces. Defaults to `Namespaced`. */
  scope?: "Namespaced" | "Cluster";
  /** What the kind is for, shown by `kubectl explain`. */
  description?: string;
  /** Columns of `kubectl get`. Defaults to none (name and age). */
  printerColumns?: readonly PrinterColumn[];
  /**
   * CEL rules on the whole object (rules on one field go on its zod schema
   * with `.meta()`). A rule whose `fieldPath` is `.metadata.name` makes the
   * schema declare `metadata.name`, all a CRD may say of metadata, so that
   * the path resolves.
   */
  validations?: readonly CelRule[];
  /**
   * The scale subresource; `specReplicasPath` defaults to `.spec.replicas`
   * and `statusReplicasPath` to `.status.replicas`. The API server then
   * refuses a negative spec replicas itself, so a `minimum: 0` on that field
   * is left out of the schema rather than reported twice. Defaults to none.
   */
  scale?: Partial<ScaleSubresource>;
  /** Labels on the CRD object itself. Defaults to none. */
  labels?: Readonly<Record<string, string>>;
  /**
   * What to do with a zod constraint the CRD cannot carry, so that the API
   * server accepts objects that break it (a `.refine()`, a `.transform()`,
   * a format it does not know; see {@link CustomKind.unenforced}):
   * `"warn"` writes each, with its path and what to do, to standard error
   * once; `"error"` refuses the schema with a `TypeError`; `"ignore"` says
   * nothing, for a reconcile that parses every spec with the zod schema
   * itself. A refinement on a field that also states CEL rules (or
   * `minProperties`, `maxProperties`) with `.meta()` counts as enforced by
   * them. Defaults to `"warn"`.
   */
  unenforced?: "warn" | "error" | "ignore";
}

/** What {@link defineKind} takes for a kind of one version. */
export interface KindOptions<Spec extends ZodSchema, Status extends ZodSchema | undefined>
  extends KindCommonOptions {
  /** The one version served and stored, e.g. `v1alpha1`. */
  version: string;
  /** The desired state; `.describe()` texts become the CRD's descriptions. */
  spec: Spec;
  /** The observed state; when given, the CRD has the status subresource. */
  status?: Status;
}

/**
 * What {@link defineKind} takes for a kind of several versions. Printer
 * columns, CEL rules, scale and labels apply to every version.
 */
export interface VersionedKindOptions<Versions extends readonly KindVersion[]>
  extends KindCommonOptions {
  /** Every version, each with its schemas; exactly one has `storage: true`. */
  versions: Versions;
  /**
   * How the API server converts between them: through the hub, by the
   * operator's webhook. It must name exactly these versions. Without it the
   * versions must share one schema (`strategy: None`). @default none
   */
  conversion?: Conversion;
}

/** A kind made by {@link defineKind}: its schemas, its resource and its CRD. */
export interface CustomKind<
  Spec extends ZodSchema = ZodSchema,
  Status extends ZodSchema | undefined = ZodSchema | undefined,
> {
  /** What the client, caches and `ControllerSpec.resource` address the kind by. */
  readonly resource: Resource;
  /** `group/version`, the `apiVersion` of the kind's objects (in its storage version). */
  readonly apiVersion: string;
  /** The spec schema (of the storage version). */
  readonly spec: Spec;
  /** The status schema (of the storage version), if any. */
  readonly status: Status;
  /** The names of its versions, as declared; `resource.version` is the storage version. */
  readonly versions: readonly string[];
  /** How its versions convert, when it has several and declared it. */
  readonly conversion?: Conversion;
  /**
   * The zod constraints of spec and status the CRD does not carry, e.g. a
   * `.refine()` at `.spec.nodeSelector`: the API server accepts objects that
   * break them. Empty when it enforces everything the schemas check.
   */
  readonly unenforced: readonly UnenforcedConstraint[];
  /** A fresh copy of the CRD, ready for server-side apply. */
  crd(): CustomResourceDefinition;
}

/**
 * The type of a kind's objects as the API server returns them: metadata, the
 * spec with defaults applied, and the status once something wrote it.
 */
export type CustomObject<K extends CustomKind> =
  & KubeObject
  & {
    metadata: ObjectMeta;
    spec: K["spec"]["_zod"]["output"];
    status?: K["status"] extends ZodSchema<infer Status> ? Status : never;
  };

/**
 * Defines a custom kind of several versions: checks the options and builds
 * its CRD once, every version in it. Its type and `resource` are those of
 * its storage version.
 *
 * @throws {RangeError} as the one-version form does, and when not exactly
 * one version is the storage version or `conversion` does not name exactly
 * the kind's versions.
 * @throws {TypeError} as the one-version form does, and when versions differ
 * in schema and no `conversion` is given.
 * @example
 * ```ts
 * import { z } from "zod";
 * import { defineKind } from "./kind.ts";
 * import { defineConversion } from "../runtime/webhook/spec.ts";
 * const spec = z.object({ schedule: z.string() });
 * const resource = {
 *   group: "example.com", version: "v2", plural: "backups", kind: "Backup", namespaced: true,
 * };
 * const backups = defineKind({
 *   group: "example.com",
 *   kind: "Backup",
 *   versions: [{ name: "v1", spec }, { name: "v2", spec: spec.extend({ keep: z.int32() }), storage: true }],
 *   conversion: defineConversion({
 *     resource,
 *     hub: "v2",
 *     versions: { v1: { toHub: (o) => o, fromHub: (o) => o } },
 *   }),
 * });
 * backups.crd().spec.conversion?.strategy; // "Webhook"
 * ```
 */
export function defineKind<const Versions extends readonly KindVersion[]>(
  options: VersionedKindOptions<Versions>,
): CustomKind<StorageVersion<Versions>["spec"], VersionStatus<StorageVersion<Versions>>>;
/**
 * Defines a custom kind: checks the options and builds its CRD once.
 *
 * @throws {RangeError} when a name, printer column, CEL rule or scale path is
 * malformed, naming the option and the value.
 * @throws {TypeError} when a schema is not structural, listing every problem,
 * or with `unenforced: "error"` when it checks what the CRD cannot carry.
 * @example
 * ```ts
 * import { z } from "zod";
 * import { defineKind } from "./kind.ts";
 * const policies = defineKind({
 *   group: "example.com",
 *   version: "v1",
 *   kind: "Policy",
 *   scope: "Cluster",
 *   spec: z.object({ rules: z.array(z.string()) }),
 * });
 * policies.resource; // { group: "example.com", version: "v1", plural: "policies", kind: "Policy", namespaced: false }
 * ```
 */
export function defineKind<
  Spec extends ZodSchema,
  Status extends ZodSchema | undefined = undefined,
>(
  options: KindOptions<Spec, Status>,
): CustomKind<Spec, Status>;
export function defineKind(
  options: KindOptions<ZodSchema, ZodSchema | undefined> | VersionedKindOptions<KindVersion[]>,
): CustomKind {
  const { group, kind } = options;
  const several = "versions" in options;
  const versions: CheckedVersion[] = several ? checkVersions(kind, options.versions) : [{
    name: options.version,
    spec: options.spec,
    status: options.status,
    served: true,
    storage: true,
  }];
  if (!several && "conversion" in options) {
    refuse(kind, "conversion", "(a Conversion)", "absent for a kind of one version");
  }
  const storage = versions.find((version) => version.storage)!;
  const plural = options.plural ?? (typeof kind === "string" ? defaultPlural(kind) : "");
  const singular = options.singular ?? (typeof kind === "string" ? kind.toLowerCase() : "");
  const shortNames = [...options.shortNames ?? []];
  const categories = [...options.categories ?? []];
  checkNames({ group, version: storage.name, kind, plural, singular, shortNames, categories });
  const scope = options.scope ?? "Namespaced";
  if (scope !== "Namespaced" && scope !== "Cluster") {
    refuse(kind, "scope", scope, "Namespaced or Cluster");
  }
  const resource: Resource = {
    group,
    version: storage.name,
    plural,
    kind,
    namespaced: scope === "Namespaced",
  };
  const printerColumns = (options.printerColumns ?? []).map((column, i) =>
    printerColumn(kind, column, i)
  );
  const unenforced: UnenforcedConstraint[] = [];
  const crdVersions = versions.map(({ name, spec, status, served }) => {
    const root = rootSchema(options, spec, status);
    const scale = options.scale && scaleSubresource(kind, options.scale, root);
    const problems = structuralProblems(root);
    if (problems.length > 0) {
      const which = several ? `the schema of ${name}` : "its schema";
      throw new TypeError(
        `Cannot define the kind ${kind}: ${which} is not structural:\n${problems.join("\n")}`,
      );
    }
    for (
      const constraint of [
        ...unenforcedConstraints(spec, ".spec"),
        ...(status ? unenforcedConstraints(status, ".status") : []),
      ]
    ) {
      const key = JSON.stringify(constraint);
      if (!unenforced.some((known) => JSON.stringify(known) === key)) unenforced.push(constraint);
    }
    const subresources = { ...(status && { status: {} }), ...(scale && { scale }) };
    return {
      name,
      served,
      storage: name === storage.name,
      ...(Object.keys(subresources).length > 0 ? { subresources } : {}),
      ...(printerColumns.length > 0 ? { additionalPrinterColumns: printerColumns } : {}),
      schema: { openAPIV3Schema: root },
    };
  });
  reportUnenforced(kind, unenforced, options.unenforced ?? "warn");
  const conversion = several ? options.conversion : undefined;
  const roots = Object.fromEntries(crdVersions.map((v) => [v.name, v.schema.openAPIV3Schema]));
  const crdConversionBlock = crdConversion(resource, roots, conversion);
  const crd: CustomResourceDefinition = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: resourceName(resource),
      ...(options.labels && { labels: { ...options.labels } }),
    },
    spec: {
      group,
      scope,
      names: {
        kind,
        listKind: `${kind}List`,
        plural,
        singular,
        ...(shortNames.length > 0 ? { shortNames } : {}),
        ...(categories.length > 0 ? { categories } : {}),
      },
      versions: crdVersions,
      ...(crdConversionBlock && { conversion: crdConversionBlock }),
    },
  };
  return {
    resource,
    apiVersion: `${group}/${storage.name}`,
    spec: storage.spec,
    status: storage.status,
    versions: versions.map((v) => v.name),
    ...(conversion && { conversion }),
    unenforced,
    crd: () => structuredClone(crd),
  };
}

/** The object's schema: apiVersion, kind, metadata where a rule names it, spec and status. */
function rootSchema(
  options: KindCommonOptions,
  spec: ZodSchema,
  status: ZodSchema | undefined,
): JsonSchema {
  const rules = (options.validations ?? []).map((rule, i) => celRule(options.kind, rule, i));
  const namesMetadata = rules.some((rule) => rule.fieldPath?.startsWith(".metadata.name"));
  return {
    ...(options.description !== undefined && { description: options.description }),
    type: "object",
    properties: {
      apiVersion: { type: "string", description: "Versioned schema of this object." },
      kind: { type: "string", description: "REST resource this object represents." },
      ...(namesMetadata &&
        { metadata: { type: "object", properties: { name: { type: "string" } } } }),
      spec: toKubernetesSchema(spec),
      ...(status && { status: toKubernetesSchema(status) }),
    },
    required: ["spec"],
    ...(rules.length > 0 && { "x-kubernetes-validations": rules }),
  };
}
