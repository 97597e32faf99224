/**
 * The versions of a kind and how the API server moves objects between
 * them: {@link KindVersion} is one version as `defineKind` takes it,
 * {@link checkVersions} the rules the API server would apply to the list
 * (exactly one storage version, unique names), and {@link crdConversion}
 * the CRD's `spec.conversion`: a webhook through the kind's
 * {@link Conversion}, or `None` when every version has the same schema.
 *
 * What the caller must know:
 *
 * - A conversion must name exactly the kind's versions, its hub and its
 *   spokes; a version it lacks (or names beyond the kind's) is refused with
 *   a `RangeError` at definition, not by the API server at the first read.
 * - The webhook's `clientConfig` is the node mode's default,
 *   `https://127.0.0.1:9443/convert/<group>/<plural>`: an operator in a pod
 *   replaces it with its Service (deploy's kustomization patches it) and
 *   the runtime injects its CA bundle at start.
 * - Several versions without a conversion are allowed only when their
 *   schemas are identical (`strategy: None` changes nothing but
 *   `apiVersion`); otherwise a `TypeError` says which differ.
 *
 * @example
 * ```ts
 * import { crdConversion } from "./versions.ts";
 * import { defineConversion } from "../runtime/webhook/spec.ts";
 * const resource = {
 *   group: "example.com", version: "v1", plural: "backups", kind: "Backup", namespaced: true,
 * };
 * const same = { v1beta1: { type: "object" }, v1: { type: "object" } };
 * crdConversion(resource, same, undefined); // { strategy: "None" }
 * const conversion = defineConversion({
 *   resource,
 *   hub: "v1",
 *   versions: { v1beta1: { toHub: (o) => o, fromHub: (o) => o } },
 * });
 * const webhook = crdConversion(resource, same, conversion);
 * webhook?.strategy === "Webhook" && webhook.webhook.clientConfig.url;
 * // "https://127.0.0.1:9443/convert/example.com/backups"
 * ```
 *
 * @module
 */
import { type Conversion, DEFAULT_WEBHOOK_PORT, webhookPaths } from "../runtime/webhook/spec.ts";
import { DNS_LABEL, refuse } from "./names.ts";
import type { Resource } from "../kube/mod.ts";
import type { CrdConversion, JsonSchema, ZodSchema } from "./types.ts";

/** One version of a kind with several (see `defineKind`'s `versions`). */
export interface KindVersion<
  Spec extends ZodSchema = ZodSchema,
  Status extends ZodSchema | undefined = ZodSchema | undefined,
> {
  /** The version, e.g. `v1beta1`. */
  readonly name: string;
  /** The desired state in this version. */
  readonly spec: Spec;
  /** The observed state in this version; when given, this version has the status subresource. */
  readonly status?: Status;
  /** Whether the API server serves it. @default true */
  readonly served?: boolean;
  /** Whether objects are stored in it; exactly one version is. @default false, true for a lone version */
  readonly storage?: boolean;
}

/** The storage version among `Versions`, or every version when none says so. */
export type StorageVersion<Versions extends readonly KindVersion[]> =
  [Extract<Versions[number], { storage: true }>] extends [never] ? Versions[number]
    : Extract<Versions[number], { storage: true }>;

/** The status schema of a version, `undefined` when it has none. */
export type VersionStatus<V> = V extends { status: infer Status extends ZodSchema } ? Status
  : undefined;

/** A version with its defaults filled in. */
export interface CheckedVersion {
  name: string;
  spec: ZodSchema;
  status: ZodSchema | undefined;
  served: boolean;
  storage: boolean;
}

/**
 * `versions` with their defaults, in the order given.
 *
 * @throws {RangeError} when the list is empty, a name is no DNS label or
 * repeats, `served` or `storage` is no boolean, or not exactly one version
 * is the storage version (a lone version is it by default).
 */
export function checkVersions(kind: string, versions: readonly KindVersion[]): CheckedVersion[] {
  if (!Array.isArray(versions) || versions.length === 0) {
    refuse(kind, "versions", versions, "a non-empty list of { name, spec }");
  }
  const checked = versions.map((version, i): CheckedVersion => {
    const name = version?.name;
    if (typeof name !== "string" || name.length > 63 || !DNS_LABEL.test(name)) {
      refuse(kind, `versions[${i}].name`, name, "a lower-case DNS label, e.g. v1beta1");
    }
    if (versions.findIndex((other) => other.name === name) !== i) {
      refuse(kind, `versions[${i}].name`, name, "a version named once");
    }
    if (version.spec === undefined || version.spec === null) {
      refuse(kind, `versions[${i}].spec`, version.spec, "a zod schema");
    }
    for (const flag of ["served", "storage"] as const) {
      if (version[flag] !== undefined && typeof version[flag] !== "boolean") {
        refuse(kind, `versions[${i}].${flag}`, version[flag], "true or false");
      }
    }
    return {
      name,
      spec: version.spec,
      status: version.status,
      served: version.served ?? true,
      storage: version.storage ?? versions.length === 1,
    };
  });
  const storage = checked.filter((version) => version.storage).map((version) => version.name);
  if (storage.length !== 1) {
    refuse(kind, "versions[].storage", storage, "true on exactly one version");
  }
  return checked;
}

/**
 * The CRD's `spec.conversion` for versions whose object schemas are
 * `roots` (by version name) of `resource`: a webhook through `conversion`, `None` for
 * identical schemas, nothing for a lone version.
 *
 * @throws {RangeError} when `conversion` is not of this kind or does not
 * name exactly its versions.
 * @throws {TypeError} when versions differ in schema and no conversion is given.
 */
export function crdConversion(
  resource: Resource,
  roots: Readonly<Record<string, JsonSchema>>,
  conversion: Conversion | undefined,
): CrdConversion | undefined {
  const { kind } = resource;
  const names = Object.keys(roots);
  if (conversion === undefined) {
    if (names.length === 1) return undefined;
    const first = JSON.stringify(roots[names[0]!]);
    const differ = names.filter((name) => JSON.stringify(roots[name]) !== first);
    if (differ.length > 0) {
      throw new TypeError(
        `Cannot define the kind ${kind}: its versions ${names.join(", ")} differ in schema ` +
          `(${differ.join(", ")} from ${names[0]}), so the API server cannot serve one as ` +
          "another: give 'conversion' (defineConversion) to convert between them",
      );
    }
    return { strategy: "None" };
  }
  if (typeof conversion?.hub !== "string" || typeof conversion.versions !== "object") {
    refuse(kind, "conversion", conversion, "a Conversion (defineConversion)");
  }
  const r = conversion.resource;
  if (r?.group !== resource.group || r.plural !== resource.plural || r.kind !== kind) {
    refuse(
      kind,
      "conversion.resource",
      r && `${r.kind} (${r.plural}.${r.group})`,
      `this kind, ${kind} (${resource.plural}.${resource.group})`,
    );
  }
  const declared = [conversion.hub, ...Object.keys(conversion.versions)];
  const lacking = declared.filter((name) => !names.includes(name));
  const missing = names.filter((name) => !declared.includes(name));
  if (lacking.length > 0 || missing.length > 0) {
    refuse(
      kind,
      "conversion",
      declared,
      `the kind's versions ${names.join(", ")}, its hub and every spoke (` +
        [
          ...(lacking.length > 0 ? [`the kind has no ${lacking.join(", ")}`] : []),
          ...(missing.length > 0 ? [`it names no ${missing.join(", ")}`] : []),
        ].join("; ") + ")",
    );
  }
  const path = webhookPaths.convert(resource);
  return {
    strategy: "Webhook",
    webhook: {
      conversionReviewVersions: ["v1"],
      clientConfig: { url: `https://127.0.0.1:${DEFAULT_WEBHOOK_PORT}${path}` },
    },
  };
}
