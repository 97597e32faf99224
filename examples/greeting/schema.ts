/**
 * The Greeting kind, `greetings.example.kinglet.dev`: a Greeting names
 * someone and, optionally, how to greet them. Its CRD, its `Resource` and
 * the type of its objects all come from these zod schemas.
 *
 * @module
 */
import { z } from "zod";
import { type CustomObject, defineKind } from "@kinglet/kinglet/crd";

/** The Greeting kind: its resource, its CRD and its schemas. */
export const greetings = defineKind({
  group: "example.kinglet.dev",
  version: "v1",
  kind: "Greeting",
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
