/**
 * The Greeting kind, `greetings.example.kinglet.dev`: a Greeting names
 * someone and, optionally, how to greet them. Its CRD and the type of its
 * objects come from these zod schemas, its names from the `Resource` in
 * `kind.ts`.
 *
 * Loaded at build time only (`deno task crds` writes the CRD to `crds/`)
 * and by tests: the operator imports `kind.ts`, so zod stays off its run path.
 *
 * @module
 */
import { z } from "zod";
import { type CustomObject, defineKind } from "@kinglet/kinglet/crd";
import { GREETINGS } from "./kind.ts";

/** The Greeting kind: its CRD and its schemas. */
export const greetings = defineKind({
  group: GREETINGS.group,
  version: GREETINGS.version,
  kind: GREETINGS.kind,
  plural: GREETINGS.plural,
  description: "Greeting renders a ConfigMap that greets someone.",
  spec: z.object({
    name: z.string().min(1).describe("Whom to greet."),
    greeting: z.string().default("Hello").describe("How to greet them."),
  }),
  status: z.object({
    message: z.string().optional().describe("The message the ConfigMap holds."),
    configMap: z.string().optional().describe("The ConfigMap's name."),
    observedGeneration: z.int().optional().describe("The generation the status is for."),
  }),
  printerColumns: [{ name: "Message", type: "string", jsonPath: ".status.message" }],
});

/** A Greeting as the API server returns it. */
export type Greeting = CustomObject<typeof greetings>;
