/**
 * What a bundle is built from, and one hash of it: a bundle is rebuilt
 * exactly when that hash changes.
 *
 * @module
 */
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { runDeno } from "./_run.ts";
import { sha256Hex } from "../_sha256.ts";

/** The configuration files beside the entry that decide how it is bundled. */
const CONFIG_FILES = ["deno.json", "deno.jsonc", "deno.lock", "package.json"] as const;

/**
 * The inputs of `entry` when none are given: every local file of its module
 * graph (`deno info`), every remote or npm module by its specifier (a new
 * version is a new specifier), and the configuration files of `root`.
 * Entries are relative to `root` where they lie under it, absolute otherwise
 * (a kinglet checkout beside the project).
 */
export async function graphInputs(root: string, entry: string): Promise<string[]> {
  const json = await runDeno(["info", "--json", entry], root, [
    `deno info could not follow the imports of ${entry}: the error below names the file with`,
    "a syntax error or an import that does not resolve (check deno.json's import map).",
  ]);
  const info = JSON.parse(json) as { modules?: { specifier: string }[] };
  const inputs = new Set<string>(CONFIG_FILES);
  for (const { specifier } of info.modules ?? []) {
    if (!specifier.startsWith("file:")) inputs.add(specifier);
    else {
      const path = fileURLToPath(specifier);
      const rel = relative(root, path);
      inputs.add(rel.startsWith("..") ? path : rel);
    }
  }
  return [...inputs];
}

/**
 * A hash of `salt` and of every input's path and content: a folder (ending
 * in `/`) stands for the files under it, a missing file for its absence, and
 * a specifier that is no path (`npm:`, `https:`) for itself.
 */
export async function inputsHash(
  root: string,
  inputs: readonly string[],
  salt: string,
): Promise<string> {
  const files: string[] = [];
  const names: string[] = [];
  for (const input of inputs) {
    if (/^[a-z][a-z0-9+.-]+:/i.test(input)) names.push(input);
    else if (input.endsWith("/")) await collect(join(root, input), files);
    else files.push(join(root, input));
  }
  files.sort();
  names.sort();
  const encoder = new TextEncoder();
  const parts: Uint8Array<ArrayBuffer>[] = [encoder.encode(`${salt}\0${names.join("\0")}\0`)];
  for (const file of files) {
    parts.push(encoder.encode(`${relative(root, file)}\0`), await contentOf(file));
    parts.push(new Uint8Array(1));
  }
  return await sha256Hex(parts);
}

// Marks a missing file, so that creating or deleting it (a deno.lock) changes the hash.
const ABSENT = new TextEncoder().encode("\0absent\0");

async function contentOf(file: string): Promise<Uint8Array<ArrayBuffer>> {
  try {
    return await Deno.readFile(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return ABSENT;
    throw error;
  }
}

async function collect(dir: string, into: string[]): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) await collect(path, into);
    else if (entry.isFile) into.push(path);
  }
}
