/**
 * FileTokenSource: a token file re-read once a minute, at once after a 401,
 * and at once when a 403 asks whether the file's token was replaced.
 */
import assert from "node:assert/strict";
import { FileTokenSource } from "../../lib/kube/token_source.ts";
import { FakeClock } from "../../lib/async/clock.ts";

/** A token file in memory that counts its reads. */
function tokenFile(content: string) {
  const file = { content, reads: 0 };
  const readTextFile = (path: string) => {
    assert.equal(path, "/t/token");
    file.reads++;
    return Promise.resolve(file.content);
  };
  return { file, readTextFile };
}

Deno.test("a token file replaced within the minute is used as soon as a 403 asks", async () => {
  const clock = new FakeClock(1_000_000);
  const { file, readTextFile } = tokenFile("old\n");
  const auth = new FileTokenSource("/t/token", { clock, readTextFile });
  assert.equal(await auth.token(), "old");
  file.content = "new\n";
  await clock.advance(5_000);
  assert.equal(await auth.token(), "old", "cached within the minute");
  assert.equal(await auth.rotated("old"), true);
  assert.equal(await auth.token(), "new");
  assert.equal(file.reads, 2, "the new token is cached, not read again");
});

Deno.test("a 403 on a token file that has not changed keeps the token", async () => {
  const clock = new FakeClock(1_000_000);
  const { file, readTextFile } = tokenFile("same");
  const auth = new FileTokenSource("/t/token", { clock, readTextFile });
  assert.equal(await auth.token(), "same");
  assert.equal(await auth.rotated("same"), false);
  assert.equal(await auth.token(), "same");
  assert.equal(file.reads, 2);
});
