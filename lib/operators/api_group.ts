/**
 * The API group and version of kinglet's kinds, in one place for the CRDs,
 * the kinds' resources and the objects kinglet writes.
 *
 * @example
 * ```ts
 * import { API_VERSION } from "./api_group.ts";
 * API_VERSION; // "kinglet.dev/v1alpha1"
 * ```
 *
 * @module
 */

/** The API group of kinglet's kinds. */
export const GROUP = "kinglet.dev";
/** The API version of kinglet's kinds. */
export const VERSION = "v1alpha1";
/** `apiVersion` of kinglet's objects. */
export const API_VERSION = `${GROUP}/${VERSION}`;
