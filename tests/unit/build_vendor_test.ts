/** kinglet vendored into a project: exactly its published files, and a record that pins them. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  KINGLET_FILES,
  kingletDigest,
  kingletFiles,
  kingletRevision,
  vendorKinglet,
} from "../../lib/build/vendor.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stdin: "null" }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test("a vendored kinglet is the published files, pinned by version, commit and digest", async () => {
  const project = await Deno.makeTempDir();
  try {
    // The project is a repository of its own, as an author's is.
    await git(project, "init", "-q");
    const author = ["-c", "user.name=author", "-c", "user.email=author@example.com"];
    await git(project, ...author, "commit", "-q", "--allow-empty", "-m", "the project");
    const record = await vendorKinglet(project, ROOT);
    const copy = join(project, "vendor", "kinglet");
    assert.deepEqual(await kingletFiles(copy), await kingletFiles(ROOT));
    assert.ok(
      (await kingletFiles(copy)).every((path) =>
        KINGLET_FILES.some((root) => path === root || path.startsWith(root))
      ),
    );
    assert.equal(record.sha256, await kingletDigest(ROOT));
    assert.equal(record.source, "./vendor/kinglet");
    assert.equal(record.commit, await git(ROOT, "rev-parse", "HEAD"));
    // The copy has no commit of its own: the project's HEAD is not kinglet's.
    assert.equal((await kingletRevision(copy)).commit, undefined);
    // A changed file changes the digest the project's test compares.
    await Deno.writeTextFile(join(copy, "lib", "kube", "mod.ts"), "// changed\n", { append: true });
    assert.notEqual(await kingletDigest(copy), record.sha256);
  } finally {
    await Deno.remove(project, { recursive: true });
  }
});
