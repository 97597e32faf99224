/**
 * The Widget kind at run time: the `Resource` the controller and the
 * client address it by, and the type of its objects. The zod schemas and the
 * CRD are in `schema.ts`, which only `deno task crds` and the tests load:
 * the running operator never loads zod, as kinglet's own operators do not.
 *
 * @module
 */
import type { Resource } from "@kinglet/kinglet/kube";

export type { Widget } from "./schema.ts";

/** The `widgets.example.org` resource; `schema.ts` defines the kind by its names. */
export const WIDGETS: Resource = {
  group: "example.org",
  version: "v1alpha1",
  plural: "widgets",
  kind: "Widget",
  namespaced: true,
};
