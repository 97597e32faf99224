/**
 * A small operator-shaped project in a temporary folder for lib/build's
 * tests: `main.ts` answers `--help` from a module of its own, and reads a
 * variable of its own as an operator reads its settings.
 *
 * @module
 */
import { join } from "node:path";

/** The files of the project, by path. */
export const PROJECT_FILES: Readonly<Record<string, string>> = {
  "deno.json": `${JSON.stringify({ tasks: {} }, null, 2)}\n`,
  "main.ts": [
    'import { greeting } from "./src/greet.ts";',
    'if (Deno.args.includes("--help")) console.log(`usage: mirror (${greeting()})`);',
    "",
  ].join("\n"),
  "src/greet.ts": 'export function greeting(): string {\n  return "hello";\n}\n',
  "NOTES.md": "Not imported by main.ts.\n",
};

/** A new project; removed when the returned value is disposed. */
export async function tempProject(): Promise<{ dir: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-build-" });
  for (const [path, text] of Object.entries(PROJECT_FILES)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  return {
    dir,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/**
 * Runs `deno <args>` in `cwd` with this process's environment less
 * `DENORT_BIN` and any `*_ALLOW_*` variable, plus `env`; its code and output.
 */
export async function runIn(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(
    Object.entries(Deno.env.toObject()).filter(([name]) =>
      name !== "DENORT_BIN" && !name.includes("_ALLOW_")
    ),
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    clearEnv: true,
    env: { ...inherited, ...env, NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}
