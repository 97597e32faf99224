/**
 * The Widget kind, `widgets.example.org`: a Widget holds a message that its
 * operator writes into a ConfigMap. Its CRD and the type of its objects come
 * from these zod schemas, its names from the `Resource` in `kind.ts`.
 *
 * Loaded at build time only (`deno task crds` writes the CRD to `crds/`)
 * and by the tests: the operator imports `kind.ts`, so zod stays off its
 * run path.
 *
 * @module
 */
import { z } from "zod";
import { conditionsSchema, type CustomObject, defineKind } from "@kinglet/kinglet/crd";
import { WIDGETS } from "./kind.ts";

/** The Widget kind: its CRD and its schemas. */
export const widgets = defineKind({
  group: WIDGETS.group,
  version: WIDGETS.version,
  kind: WIDGETS.kind,
  plural: WIDGETS.plural,
  description: "Widget writes its message into a ConfigMap.",
  spec: z.object({
    message: z.string().min(1).describe("What the ConfigMap says."),
  }),
  status: z.object({
    observedGeneration: z.int().optional().describe("The generation the status is for."),
    configMap: z.string().optional().describe("The ConfigMap's name."),
    conditions: conditionsSchema("Ready: whether the ConfigMap says what the spec says."),
  }),
  printerColumns: [
    { name: "Message", type: "string", jsonPath: ".spec.message" },
    { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
});

/** A Widget as the API server returns it. */
export type Widget = CustomObject<typeof widgets>;
