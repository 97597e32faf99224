import assert from "node:assert/strict";
import { FakeClock } from "../../lib/async/clock.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { tokenReviewAuth } from "../../lib/runtime/manager/endpoint_auth.ts";

/** An API server double that knows two tokens and who may get what. */
function reviewer(down = false) {
  const calls: string[] = [];
  const users: Record<string, string> = { "reader-token": "reader", "other-token": "other" };
  const client = {
    create<T extends KubeObject>(resource: Resource, body: T): Promise<T> {
      calls.push(resource.plural);
      if (down) return Promise.reject(new Error("connection refused"));
      const spec = body.spec as { token?: string; user?: string };
      if (resource.plural === "tokenreviews") {
        const username = users[spec.token ?? ""];
        return Promise.resolve({
          ...body,
          status: { authenticated: !!username, ...(username && { user: { username } }) },
        });
      }
      return Promise.resolve({ ...body, status: { allowed: spec.user === "reader" } });
    },
  };
  return { client, calls };
}

const get = (token?: string, path = "/metrics") =>
  new Request(
    `http://kinglet${path}`,
    token ? { headers: { authorization: `Bearer ${token}` } } : {},
  );

Deno.test("a request without a token or with an unknown one is a 401, a known user without the right a 403, the right one passes", async () => {
  const { client } = reviewer();
  const auth = tokenReviewAuth(client);
  assert.equal((await auth(get()))?.status, 401);
  assert.equal((await auth(get("stolen")))?.status, 401);
  const refused = await auth(get("other-token"));
  assert.equal(refused?.status, 403);
  assert.match(await refused!.text(), /other may not get it/);
  assert.equal(await auth(get("reader-token")), undefined);
});

Deno.test("verdicts are cached per token and path, a refusal for a fifth as long, and forgotten past the limit", async () => {
  const { client, calls } = reviewer();
  const clock = new FakeClock();
  const auth = tokenReviewAuth(client, { clock, cacheTtlMs: 60_000, maxEntries: 2 });
  await auth(get("reader-token"));
  await auth(get("reader-token"));
  assert.equal(calls.length, 2, "a second scrape asked the API server again");
  await auth(get("reader-token", "/debug/cache"));
  assert.equal(calls.length, 4, "another path is another question");
  await clock.advance(60_000);
  await auth(get("reader-token"));
  assert.equal(calls.length, 6, "an expired verdict was trusted");
  await auth(get("other-token"));
  await clock.advance(12_000);
  await auth(get("other-token"));
  assert.equal(calls.length, 10, "a refusal was trusted longer than a fifth of the TTL");
});

Deno.test("an API server that cannot answer is a 503, never a pass", async () => {
  const { client } = reviewer(true);
  const answer = await tokenReviewAuth(client)(get("reader-token"));
  assert.equal(answer?.status, 503);
});

Deno.test("options out of range are refused with what was given", () => {
  const { client } = reviewer();
  assert.throws(
    () => tokenReviewAuth(client, { maxEntries: 0 }),
    /'maxEntries' must be a positive integer, got 0/,
  );
  assert.throws(
    () => tokenReviewAuth(client, { cacheTtlMs: -1 }),
    /'cacheTtlMs' must be >= 0, got -1/,
  );
});
