/**
 * `/debug/cache` and `kinglet debug cache` against the real control plane: a
 * manager whose primary cache is capped below its object count, and which
 * owns Secrets with data, lists every key page by page with the
 * resourceVersion the API server has, resident or evicted, and never a byte
 * of a Secret's contents.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/debug_cache_test.ts
 */
import assert from "node:assert/strict";
import type { CacheKeysPage } from "../../lib/runtime/cache/cache_debug.ts";
import { SECRETS } from "../../lib/kube/resources.ts";
import { Manager } from "../../lib/runtime/manager/manager.ts";
import { kingletArgs } from "../_support/kinglet_bundle.ts";
import { waitFor } from "../_support/kube.ts";
import { controllerRef, type Gadget, gadget, GADGETS, gadgetScope, keyOf } from "./_gadgets.ts";

const MARKER = "s3cr3t-debug-cache-marker";
const NAMES = ["g1", "g2", "g3", "g4", "g5"];

Deno.test("/debug/cache lists each cache's keys page by page, resident or evicted, never Secret contents", async () => {
  await using s = await gadgetScope("debug-cache");
  const { client, namespace } = s;
  const manager = new Manager({
    client,
    namespace,
    metricsAddress: "127.0.0.1:0",
    healthAddress: "0",
    budget: { maxObjects: 2 },
  });
  manager.add<Gadget>({
    name: "gadgets",
    resource: GADGETS,
    owns: [{ resource: SECRETS }],
    reconcile: async (g, context) => {
      await client.apply(SECRETS, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: `${g.metadata?.name}-credentials`,
          namespace: g.metadata?.namespace,
          ownerReferences: [controllerRef(g)],
        },
        stringData: { password: MARKER },
      }, { fieldManager: "debug-cache-test", force: true, signal: context.signal });
      return {};
    },
  });
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  try {
    for (const name of NAMES) await client.create(GADGETS, gadget(name), { namespace });
    const base = `http://127.0.0.1:${manager.listeners[0]!.port}/debug/cache`;
    const get = async (query: string) => {
      const response = await fetch(base + query);
      return { status: response.status, body: await response.text() };
    };
    const secretsKnown = async () => {
      const page = JSON.parse((await get("?cache=secrets")).body) as CacheKeysPage;
      return page.items.length === NAMES.length;
    };
    await waitFor("the five Secrets in the cache", secretsKnown);

    const gadgets: CacheKeysPage[] = [];
    let token: string | undefined;
    do {
      const query = `?cache=gadgets.test.kinglet.dev&limit=2${token ? `&continue=${token}` : ""}`;
      const answer = await get(query);
      assert.equal(answer.status, 200, answer.body);
      const page = JSON.parse(answer.body) as CacheKeysPage;
      gadgets.push(page);
      token = page.continue;
    } while (token);
    assert.equal(gadgets.length, 3, "five keys in pages of two");
    const items = gadgets.flatMap((p) => p.items);
    assert.deepEqual(items.map((i) => i.key), NAMES.map((n) => keyOf(namespace, n)));
    const live = await client.list<Gadget>(GADGETS, { namespace });
    const liveVersions = Object.fromEntries(
      live.items.map((g) => [keyOf(namespace, g.metadata!.name!), g.metadata!.resourceVersion]),
    );
    for (const item of items) {
      assert.equal(item.resourceVersion, liveVersions[item.key], item.key);
      assert.equal(item.bytes === null, !item.resident, `${item.key}: a size only when resident`);
    }
    const resident = items.filter((i) => i.resident).length;
    assert.ok(resident <= 2, `${resident} resident under a budget of 2`);
    const summary = JSON.parse((await get("")).body);
    const stats = summary.caches["gadgets.test.kinglet.dev"];
    assert.equal(stats.keys, 5);
    assert.equal(stats.objects, resident);

    const secrets = await get("?cache=secrets");
    assert.equal(secrets.status, 200);
    assert.match(secrets.body, /g1-credentials/);
    assert.ok(!secrets.body.includes(MARKER), "a Secret's data shows in /debug/cache");
    assert.ok(!secrets.body.includes(btoa(MARKER)), "a Secret's data shows in /debug/cache");

    const unknown = await get("?cache=pods");
    assert.equal(unknown.status, 404);
    assert.match(unknown.body, /no cache \\"pods\\"; known: gadgets\.test\.kinglet\.dev, secrets/);
    const badLimit = await get("?cache=secrets&limit=0");
    assert.equal(badLimit.status, 400);
    assert.match(badLimit.body, /'limit' must be an integer/);

    const cli = await new Deno.Command(Deno.execPath(), {
      args: await kingletArgs([
        "debug",
        "cache",
        `--address=127.0.0.1:${manager.listeners[0]!.port}`,
        "--cache=secrets",
        "--page-size=2",
      ]),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(cli.stdout);
    assert.equal(cli.code, 0, new TextDecoder().decode(cli.stderr));
    const lines = stdout.trim().split("\n");
    assert.match(lines[0]!, /^KEY\s+RESOURCEVERSION\s+STATE\s+BYTES$/);
    for (const name of NAMES) {
      assert.match(
        stdout,
        new RegExp(`^${namespace}/${name}-credentials\\s+\\d+\\s+resident\\s+\\d+$`, "m"),
      );
    }
    assert.equal(lines.at(-1), "5 keys in secrets, 5 resident, 0 evicted");
    assert.ok(!stdout.includes(MARKER));
  } finally {
    stop.abort();
    await running;
  }
});
