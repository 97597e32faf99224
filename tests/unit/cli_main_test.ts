/** The command line's words as a user reads them: help, unknown commands. */
import assert from "node:assert/strict";
import { kingletArgs } from "../_support/kinglet_bundle.ts";

async function kinglet(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: await kingletArgs(args),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

Deno.test("the main help lists the commands and heads the run flags once", async () => {
  const { code, stdout } = await kinglet(["--help"]);
  assert.equal(code, 0);
  for (const command of ["install", "uninstall", "crds", "debug cache", "init", "version"]) {
    assert.match(stdout, new RegExp(`^  kinglet ${command}`, "m"), command);
  }
  const headings = stdout.split("\n").filter((line) => /^[A-Z].*:$/.test(line));
  assert.deepEqual(headings, ["Usage:", "Flags of kinglet run:"]);
});

Deno.test("a mistyped command gets a did-you-mean and exit code 2", async () => {
  const { code, stderr } = await kinglet(["instal"]);
  assert.equal(code, 2);
  assert.match(stderr, /^kinglet: unknown command "instal" \(did you mean install\?\)$/m);
});

Deno.test("an unknown short flag reads as typed on the command line", async () => {
  const { code, stderr } = await kinglet(["-v"]);
  assert.equal(code, 2);
  assert.match(stderr, /^kinglet: unknown flag -v$/m);
});
