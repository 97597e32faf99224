/**
 * The Backup kind, `backups.example.kinglet.dev`: a Backup names a
 * PersistentVolumeClaim, a cron schedule and a destination, and how many
 * copies to keep. Its CRD (with printer columns for `kubectl get backups`)
 * and the type of its objects come from these zod schemas, its names from
 * the `Resource` in `kind.ts`.
 *
 * Loaded at build time only (`deno task crds` writes the CRD to `crds/`)
 * and by tests: the operator imports `kind.ts`, so zod stays off its run path.
 *
 * @module
 */
import { z } from "zod";
import { conditionsSchema, type CustomObject, defineKind } from "@kinglet/kinglet/crd";
import { BACKUPS } from "./kind.ts";

/** The Backup kind: its CRD and its schemas. */
export const backups = defineKind({
  group: BACKUPS.group,
  version: BACKUPS.version,
  kind: BACKUPS.kind,
  plural: BACKUPS.plural,
  shortNames: ["bk"],
  description: "Backup copies a PersistentVolumeClaim to a destination on a schedule.",
  spec: z.object({
    source: z.string().min(1).describe("The PersistentVolumeClaim to copy, in this namespace."),
    schedule: z.string().regex(/^(@(hourly|daily|weekly|monthly)|(\S+\s+){4}\S+)$/).describe(
      "When to copy: a cron schedule such as '0 3 * * *', or @hourly, @daily, @weekly, @monthly.",
    ),
    destination: z.string().regex(/^(s3|gs|file):\/\/.+/).describe(
      "Where copies go: s3://bucket/prefix, gs://bucket/prefix or file:///path.",
    ),
    keep: z.int32().min(1).max(365).default(7).describe("How many copies to keep."),
  }),
  status: z.object({
    observedGeneration: z.int().optional().describe("The generation the status is for."),
    plan: z.string().optional().describe("The ConfigMap holding the backup plan."),
    conditions: conditionsSchema("Ready: whether the source exists and copies are scheduled."),
  }),
  printerColumns: [
    { name: "Source", type: "string", jsonPath: ".spec.source" },
    { name: "Schedule", type: "string", jsonPath: ".spec.schedule" },
    { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
});

/** A Backup as the API server returns it. */
export type Backup = CustomObject<typeof backups>;
