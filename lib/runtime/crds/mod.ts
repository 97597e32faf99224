/**
 * An operator's own CRDs, installed and uninstalled: server-side apply and a
 * wait until each is Established, deletion and a wait until each is gone.
 *
 * @example Uninstall, with a fake client whose CRD is already gone
 * ```ts
 * import { uninstallCrds } from "./mod.ts";
 * import { ApiError } from "../../kube/mod.ts";
 * const gone = () =>
 *   Promise.reject(new ApiError({ status: 404, message: "not found", verb: "GET", path: "/" }));
 * const client = { delete: gone, get: gone };
 * const deleted = await uninstallCrds(client, ["backups.example.com"]);
 * if (deleted.length !== 0) throw new Error("nothing was there to delete");
 * ```
 *
 * @module
 */
export * from "./install.ts";
export * from "./migrate.ts";
