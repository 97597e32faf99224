/**
 * The Backup kind at run time: the `Resource` the controller and the client
 * address it by, and the type of its objects. The zod schemas and the CRD
 * are in `schema.ts`, which only `deno task crds` (writing
 * `crds/backups.example.kinglet.dev.yaml`) and the tests load: the running
 * operator never loads zod, as kinglet's own operators do not.
 *
 * @module
 */
import type { Resource } from "@kinglet/kinglet/kube";

export type { Backup } from "./schema.ts";

/** The `backups.example.kinglet.dev` resource; `schema.ts` defines the kind by its names. */
export const BACKUPS: Resource = {
  group: "example.kinglet.dev",
  version: "v1",
  plural: "backups",
  kind: "Backup",
  namespaced: true,
};
