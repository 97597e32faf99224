/**
 * The schema hash of a CRD: what tells a running operator whether the CRD in
 * the cluster is the one it was built with, by reading one annotation
 * ({@link SCHEMA_HASH_ANNOTATION}) instead of comparing schemas. kinglet's
 * `deno task crds` writes each CRD with its hash and commits the hashes
 * beside them (`crds/schema_hashes.ts`), which `kinglet run` compares with
 * the installed CRDs' annotations without loading the schemas.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { defineKind } from "./kind.ts";
 * import { SCHEMA_HASH_ANNOTATION } from "./types.ts";
 * import { withSchemaHash } from "./schema_hash.ts";
 * const notes = defineKind({
 *   group: "example.com", version: "v1", kind: "Note", spec: z.object({ text: z.string() }),
 * });
 * const crd = withSchemaHash(notes.crd());
 * crd.metadata.annotations?.[SCHEMA_HASH_ANNOTATION]; // 16 hex digits
 * ```
 *
 * @module
 */
import { createHash } from "node:crypto";
import { type CustomResourceDefinition, SCHEMA_HASH_ANNOTATION } from "./types.ts";

/**
 * The first 16 hex digits of the SHA-256 of the CRD as JSON, with any schema
 * hash annotation left out: any change to names, columns or schema changes it.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { defineKind } from "./kind.ts";
 * import { schemaHash } from "./schema_hash.ts";
 * const notes = defineKind({
 *   group: "example.com", version: "v1", kind: "Note", spec: z.object({ text: z.string() }),
 * });
 * schemaHash(notes.crd()).length; // 16
 * ```
 */
export function schemaHash(crd: CustomResourceDefinition): string {
  const { annotations, ...metadata } = crd.metadata;
  const { [SCHEMA_HASH_ANNOTATION]: _hash, ...others } = annotations ?? {};
  const hashed = Object.keys(others).length ? { ...metadata, annotations: others } : metadata;
  const json = JSON.stringify({ ...crd, metadata: hashed });
  return createHash("sha256").update(json).digest("hex").slice(0, 16);
}

/**
 * A copy of `crd` annotated with its {@link schemaHash}.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { defineKind } from "./kind.ts";
 * import { withSchemaHash } from "./schema_hash.ts";
 * const notes = defineKind({
 *   group: "example.com", version: "v1", kind: "Note", spec: z.object({ text: z.string() }),
 * });
 * Object.keys(withSchemaHash(notes.crd()).metadata.annotations ?? {}); // ["kinglet.dev/schema-hash"]
 * ```
 */
export function withSchemaHash(crd: CustomResourceDefinition): CustomResourceDefinition {
  return {
    ...crd,
    metadata: {
      ...crd.metadata,
      annotations: { ...crd.metadata.annotations, [SCHEMA_HASH_ANNOTATION]: schemaHash(crd) },
    },
  };
}
