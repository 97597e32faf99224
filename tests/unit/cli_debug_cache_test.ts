import assert from "node:assert/strict";
import { endpoint, keysTable, summaryTable } from "../../lib/cli/debug_cache.ts";
import { UsageError } from "../../lib/cli/flags.ts";
import { formatTable } from "../../lib/cli/table.ts";

Deno.test("a table pads each column to its widest cell, three spaces apart, without trailing spaces", () => {
  assert.equal(
    formatTable(["KEY", "RV"], [["default/web", "12"], ["a/b", "7"]]),
    "KEY           RV\ndefault/web   12\na/b           7",
  );
});

Deno.test("the address is taken as --metrics-bind-address takes it, or as a URL", () => {
  assert.equal(endpoint(":8080"), "http://127.0.0.1:8080/debug/cache");
  assert.equal(endpoint("0.0.0.0:9090"), "http://127.0.0.1:9090/debug/cache");
  assert.equal(endpoint("10.0.0.5:8080"), "http://10.0.0.5:8080/debug/cache");
  assert.equal(endpoint("http://node-1:8080/"), "http://node-1:8080/debug/cache");
  assert.throws(() => endpoint("node-1"), (e: unknown) => e instanceof UsageError);
});

Deno.test("the summary has one row per cache with its evicted count and a line of process figures", () => {
  const text = summaryTable({
    phase: "running",
    memory: { rssBytes: 48 * 1024 * 1024 },
    controllers: [{ name: "webapp", queueDepth: 3, inFlight: 1 }],
    caches: {
      "webapps.kinglet.dev": {
        keys: 10,
        objects: 4,
        bytes: 2 * 1024 * 1024,
        evictions: 6,
        synced: true,
        resourceVersion: "901",
        restarts: 0,
      },
    },
  });
  const lines = text.split("\n");
  assert.equal(lines[0], "phase running, RSS 48.0 MiB, queue depth webapp 3");
  assert.match(lines[2]!, /^CACHE\s+SYNCED\s+KEYS\s+RESIDENT\s+EVICTED\s+BYTES\s+EVICTIONS\s+RV$/);
  assert.match(lines[3]!, /^webapps\.kinglet\.dev\s+yes\s+10\s+4\s+6\s+2\.0 MiB\s+6\s+901$/);
});

Deno.test("the key table joins every page and counts resident and evicted keys", () => {
  const text = keysTable([
    {
      cache: "secrets",
      keys: 3,
      items: [
        { key: "db/a", resourceVersion: "5", resident: true, bytes: 420 },
        { key: "db/b", resourceVersion: "6", resident: false, bytes: null },
      ],
      continue: "ZGIvYg==",
    },
    {
      cache: "secrets",
      keys: 3,
      items: [{ key: "db/c", resourceVersion: "9", resident: true, bytes: 17 }],
    },
  ]);
  const lines = text.split("\n");
  assert.match(lines[0]!, /^KEY\s+RESOURCEVERSION\s+STATE\s+BYTES$/);
  assert.match(lines[2]!, /^db\/b\s+6\s+evicted\s+-$/);
  assert.equal(lines.at(-1), "3 keys in secrets, 2 resident, 1 evicted");
});
