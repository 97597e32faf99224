/**
 * kinglet's version, from deno.json.
 *
 * @example
 * ```ts
 * import { VERSION } from "./version.ts";
 * VERSION; // e.g. "0.1.0"
 * ```
 *
 * @module
 */
import meta from "../../deno.json" with { type: "json" };

/** The version in deno.json. */
export const VERSION: string = meta.version;
