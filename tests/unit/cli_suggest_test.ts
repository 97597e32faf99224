import assert from "node:assert/strict";
import { editDistance, suggest } from "../../lib/cli/suggest.ts";

Deno.test("edit distance counts insertions, deletions and substitutions", () => {
  assert.equal(editDistance("install", "install"), 0);
  assert.equal(editDistance("instal", "install"), 1);
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(editDistance("", "crds"), 4);
});

Deno.test("suggest picks the nearest command and stays silent when nothing is close", () => {
  const commands = ["run", "install", "uninstall", "crds", "debug", "version"];
  assert.equal(suggest("instal", commands), "install");
  assert.equal(suggest("uninstal", commands), "uninstall");
  assert.equal(suggest("crd", commands), "crds");
  assert.equal(suggest("verison", commands), "version");
  assert.equal(suggest("frobnicate", commands), undefined);
  assert.equal(suggest("x", commands), undefined);
});

Deno.test("suggest completes a truncated flag name", () => {
  assert.equal(
    suggest("leader-elec", ["leader-elect", "leader-election-namespace"]),
    "leader-elect",
  );
  assert.equal(
    suggest("max-concurrent", ["max-concurrent-reconciles"]),
    "max-concurrent-reconciles",
  );
});
