/**
 * The schema hash of a CRD: what tells a running kinglet whether the CRDs in
 * the cluster are the ones it was built with. `deno task crds` writes each
 * CRD with its hash in the {@link SCHEMA_HASH_ANNOTATION} annotation and
 * commits the hashes beside them (`crds/schema_hashes.ts`), which
 * `kinglet run` reads without loading the schemas; `kinglet install` applies
 * the annotated CRDs.
 *
 * @example
 * ```ts
 * import { withSchemaHash } from "./schema_hash.ts";
 * import { buildCrd } from "./crd.ts";
 * import { webAppDefinition } from "./webapp/schema.ts";
 * const crd = withSchemaHash(buildCrd(webAppDefinition));
 * crd.metadata.annotations?.["kinglet.dev/schema-hash"]; // 16 hex digits
 * ```
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { CustomResourceDefinition } from "./crd.ts";
import { SCHEMA_HASH_ANNOTATION } from "./labels.ts";

/**
 * The first 16 hex digits of the SHA-256 of the CRD as JSON, with any schema
 * hash annotation left out: any change to names, columns or schema changes it.
 */
export function schemaHash(crd: CustomResourceDefinition): string {
  const { annotations, ...metadata } = crd.metadata;
  const { [SCHEMA_HASH_ANNOTATION]: _hash, ...others } = annotations ?? {};
  const hashed = Object.keys(others).length ? { ...metadata, annotations: others } : metadata;
  const json = JSON.stringify({ ...crd, metadata: hashed });
  return createHash("sha256").update(json).digest("hex").slice(0, 16);
}

/** A copy of `crd` annotated with its {@link schemaHash}. */
export function withSchemaHash(crd: CustomResourceDefinition): CustomResourceDefinition {
  return {
    ...crd,
    metadata: {
      ...crd.metadata,
      annotations: { ...crd.metadata.annotations, [SCHEMA_HASH_ANNOTATION]: schemaHash(crd) },
    },
  };
}
