/**
 * The Backup kind, `backups.example.kinglet.dev`: a Backup names a
 * PersistentVolumeClaim, a cron schedule and a destination, and how many
 * copies to keep. Its CRD (with printer columns for `kubectl get backups`),
 * its `Resource` and the type of its objects all come from these zod schemas.
 *
 * @module
 */
import { z } from "zod";
import { conditionsSchema, type CustomObject, defineKind } from "@kinglet/kinglet/crd";

/** The Backup kind: its resource, its CRD and its schemas. */
export const backups = defineKind({
  group: "example.kinglet.dev",
  version: "v1",
  kind: "Backup",
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
