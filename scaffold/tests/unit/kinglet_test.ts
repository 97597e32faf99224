/**
 * vendor/kinglet is the kinglet that kinglet.json records: the files kinglet
 * publishes, unchanged since they were vendored (see README.md, "kinglet").
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { kingletDigest } from "@kinglet/kinglet/build";

Deno.test("vendor/kinglet is the kinglet that kinglet.json records", async () => {
  const file = new URL("../../kinglet.json", import.meta.url);
  const record: { sha256: string } = JSON.parse(await Deno.readTextFile(file));
  const vendored = fileURLToPath(new URL("../../vendor/kinglet/", import.meta.url));
  assert.equal(await kingletDigest(vendored), record.sha256);
});
