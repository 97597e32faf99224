/**
 * POSIX path helpers for the kubeconfig code: an absolute path from
 * segments, and a path's folder. Kept here rather than taken from `node:path`,
 * whose import loads Deno's Node compatibility layer (about 3.5 MiB of
 * resident memory) into an operator that needs nothing else from it.
 *
 * @example
 * ```ts
 * import { dirname, resolvePath } from "./_path.ts";
 * resolvePath("/etc/kube", "../certs/ca.crt"); // "/etc/certs/ca.crt"
 * dirname("/etc/kube/config"); // "/etc/kube"
 * ```
 *
 * @module
 */

/**
 * The absolute, normalised path of `segments` joined from right to left
 * until one is absolute, starting from the working directory, as
 * `node:path`'s `resolve` does on POSIX.
 */
export function resolvePath(...segments: string[]): string {
  let joined = "";
  for (let i = segments.length - 1; i >= 0 && !joined.startsWith("/"); i--) {
    const segment = segments[i]!;
    if (segment) joined = joined ? `${segment}/${joined}` : segment;
  }
  if (!joined.startsWith("/")) joined = `${Deno.cwd()}/${joined}`;
  const parts: string[] = [];
  for (const part of joined.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

/** The folder of `path`: everything before its last `/` (`/` for a top-level entry). */
export function dirname(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  const slash = trimmed.lastIndexOf("/");
  if (slash === -1) return ".";
  return slash === 0 ? "/" : trimmed.slice(0, slash);
}
