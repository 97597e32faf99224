/** `hack/with_cluster.ts` prints its usage for --help instead of starting a control plane. */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { parseArgs } from "../../hack/with_cluster.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

Deno.test("with_cluster takes a command after -- or alone, and refuses an option of its own it does not know", () => {
  assert.deepEqual(parseArgs(["--", "deno", "test"]), { command: ["deno", "test"] });
  assert.deepEqual(parseArgs(["deno", "test", "--help"]), { command: ["deno", "test", "--help"] });
  assert.deepEqual(parseArgs(["--", "deno", "--help"]), { command: ["deno", "--help"] });
  assert.deepEqual(parseArgs(["--help"]), { help: true });
  assert.deepEqual(parseArgs(["-h"]), { help: true });
  assert.deepEqual(parseArgs(["--version"]), { refused: "unknown option --version" });
  assert.deepEqual(parseArgs([]), { refused: "no command" });
});

Deno.test("with_cluster --help prints its usage and exits 0 without starting anything", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-env", "hack/with_cluster.ts", "--help"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.match(stdout, /^usage: deno run -A hack\/with_cluster\.ts \[--\] <command>/);
  assert.match(stdout, /KINGLET_K8S_VERSION=oldest/);
});
