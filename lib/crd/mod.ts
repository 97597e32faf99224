/**
 * A custom kind from a zod schema, as `#[derive(CustomResource)]` makes one
 * in kube-rs: the CRD (structural schema, printer columns, CEL rules, status
 * and scale subresources, schema hash), the `Resource` the client and the
 * runtime address the kind by, and the TypeScript type of its objects.
 *
 * Install the CRD with `installCrds` of the runtime (`./runtime`), which does
 * not load zod, or write it out as YAML for your manifests.
 *
 * This module loads zod (`npm:zod@4.6.7`); import zod at the same version in
 * your project (`"zod": "npm:zod@4.6.7"` in your import map) so that your
 * schemas and this module share one copy.
 *
 * @example Define a kind, get its type, its resource and its CRD
 * ```ts
 * import { z } from "zod";
 * import { type CustomObject, defineKind, withSchemaHash } from "./mod.ts";
 *
 * export const backups = defineKind({
 *   group: "example.com",
 *   version: "v1",
 *   kind: "Backup",
 *   shortNames: ["bk"],
 *   description: "Backup copies a volume on a schedule.",
 *   spec: z.object({
 *     volume: z.string().min(1).describe("PersistentVolumeClaim to copy."),
 *     schedule: z.string().describe("Cron schedule, e.g. 0 3 * * *."),
 *     keep: z.int32().min(1).default(7).describe("Copies to keep."),
 *   }),
 *   status: z.object({
 *     observedGeneration: z.int().optional(),
 *     lastRun: z.string().meta({ format: "date-time" }).optional(),
 *   }),
 *   printerColumns: [
 *     { name: "Schedule", type: "string", jsonPath: ".spec.schedule" },
 *     { name: "Last run", type: "date", jsonPath: ".status.lastRun" },
 *   ],
 * });
 * export type Backup = CustomObject<typeof backups>;
 *
 * const crd = withSchemaHash(backups.crd()); // apply it, or print it as YAML
 * if (crd.metadata.name !== "backups.example.com") throw new Error(crd.metadata.name);
 * if (backups.resource.plural !== "backups") throw new Error("unexpected plural");
 * ```
 *
 * @module
 */
export * from "./conditions.ts";
export * from "./kind.ts";
export * from "./schema_hash.ts";
export * from "./structural.ts";
export * from "./types.ts";
export type { KindVersion, StorageVersion, VersionStatus } from "./versions.ts";
