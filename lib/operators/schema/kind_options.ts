/**
 * What kinglet's three kinds share in their CRDs: group, version and names
 * from the kind's run-time resource, the `kinglet` category, the
 * `app.kubernetes.io/part-of` label, the CEL rule that keeps a primary's
 * name usable as the name of the Services kinglet derives from it, and no
 * zod constraint the API server would not enforce (`kinglet run` checks
 * specs with what the CRD says, not with zod).
 *
 * @example
 * ```ts
 * import { kingletKindOptions } from "./kind_options.ts";
 * import { WEB_APPS } from "../webapp/kind.ts";
 * kingletKindOptions(WEB_APPS, 63).validations[0]!.fieldPath; // ".metadata.name"
 * ```
 *
 * @module
 */
import type { CelRule } from "../../crd/mod.ts";
import type { Resource } from "../../kube/mod.ts";

/** The options of `defineKind` that every kind of kinglet's sets the same way. */
export interface KingletKindOptions {
  group: string;
  version: string;
  kind: string;
  plural: string;
  categories: string[];
  labels: Record<string, string>;
  validations: CelRule[];
  unenforced: "error";
}

/**
 * The shared options of the kind `resource` names, refusing at admission a
 * `metadata.name` longer than `maxNameLength`: children's names derive from
 * it, and some have tighter limits than the primary (a Service name is a
 * 63-character DNS label).
 */
export function kingletKindOptions(resource: Resource, maxNameLength: number): KingletKindOptions {
  const { group, version, kind, plural } = resource;
  return {
    group,
    version,
    kind,
    plural,
    categories: ["kinglet"],
    labels: { "app.kubernetes.io/part-of": "kinglet" },
    validations: [{
      rule: `self.metadata.name.size() <= ${maxNameLength} && ` +
        `self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')`,
      message: `must be a DNS label of at most ${maxNameLength} characters starting with a ` +
        "letter, because it names the Services kinglet creates",
      fieldPath: ".metadata.name",
    }],
    unenforced: "error",
  };
}
