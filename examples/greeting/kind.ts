/**
 * The Greeting kind at run time: the `Resource` the controller and the
 * client address it by, and the type of its objects. The zod schemas and
 * the CRD are in `schema.ts`, which only `deno task crds` (writing
 * `crds/greetings.example.kinglet.dev.yaml`) and the tests load: the running
 * operator never loads zod, as kinglet's own operators do not.
 *
 * @module
 */
import type { Resource } from "@kinglet/kinglet/kube";

export type { Greeting } from "./schema.ts";

/** The `greetings.example.kinglet.dev` resource; `schema.ts` defines the kind by its names. */
export const GREETINGS: Resource = {
  group: "example.kinglet.dev",
  version: "v1",
  plural: "greetings",
  kind: "Greeting",
  namespaced: true,
};
