import assert from "node:assert/strict";
import {
  areaOf,
  type CpuProfile,
  formatSummary,
  shortUrl,
  summarizeProfile,
} from "../../bench/probes/cpu_profile.ts";

const REPO = "/src/kinglet/";
const NPM_CACHE = "file:///root/.cache/deno/npm/registry.npmjs.org";

Deno.test("cpu profile areas name kinglet folders, npm packages, Deno internals and V8", () => {
  assert.equal(
    areaOf("reconcile", `file://${REPO}lib/runtime/controller/controller.ts`, REPO),
    "kinglet lib/runtime",
  );
  assert.equal(areaOf("main", `file://${REPO}main.ts`, REPO), "kinglet main.ts");
  assert.equal(areaOf("parse", `${NPM_CACHE}/zod/3.25.76/v3/types.js`, REPO), "npm:zod");
  assert.equal(
    areaOf("emit", `${NPM_CACHE}/@logtape/logtape/1.0.0/esm/logger.js`, REPO),
    "npm:@logtape/logtape",
  );
  assert.equal(areaOf("fetch", "ext:deno_fetch/26_fetch.js", REPO), "Deno ext:deno_fetch");
  assert.equal(areaOf("(garbage collector)", "", REPO), "(garbage collector)");
  assert.equal(areaOf("op_read", "", REPO), "Deno ops (op_*)");
  assert.equal(areaOf("op_inspector_emit_protocol_event", "", REPO), "(inspector reporting)");
  assert.equal(
    areaOf("emit", "ext:deno_node/inspector_network_bridge.js", REPO),
    "(inspector reporting)",
  );
  assert.equal(areaOf("parse", "", REPO), "V8 builtins (no url)");
  assert.equal(areaOf("f", "file:///elsewhere/x.ts", REPO), "other");
});

Deno.test("cpu profile urls shorten to a repo path or npm:<package>/<file>", () => {
  assert.equal(shortUrl(`file://${REPO}lib/kube/watch.ts`, REPO), "lib/kube/watch.ts");
  assert.equal(shortUrl(`${NPM_CACHE}/yaml/2.8.1/dist/parse/lexer.js`, REPO), "npm:yaml/lexer.js");
  assert.equal(shortUrl("ext:core/01_core.js", REPO), "ext:core/01_core.js");
  assert.equal(shortUrl("", REPO), "");
});

Deno.test("cpu profile self time counts each sample until the next one and the last until endTime", () => {
  const frame = (functionName: string, url = "") => ({
    functionName,
    url,
    lineNumber: 9,
    columnNumber: 0,
  });
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2, 3, 4] },
      { id: 2, callFrame: frame("(idle)") },
      {
        id: 3,
        callFrame: frame("reconcile", `file://${REPO}lib/operators/webapp.ts`),
        children: [5],
      },
      { id: 4, callFrame: frame("(garbage collector)") },
      { id: 5, callFrame: frame("", `${NPM_CACHE}/zod/3.25.76/v3/types.js`) },
    ],
    startTime: 1_000,
    endTime: 11_000,
    // Samples at 1000, 2000, 3000, 7000, 9000; each lasts until the next, the last until 11000.
    samples: [2, 3, 5, 3, 4],
    timeDeltas: [0, 1_000, 1_000, 4_000, 2_000],
  };
  const summary = summarizeProfile(profile, REPO);
  assert.equal(summary.totalMs, 10);
  assert.equal(summary.busyMs, 9);
  assert.equal(summary.inspectorMs, 0);
  assert.deepEqual(summary.functions.map((f) => [f.name, f.where, f.ms]), [
    ["(anonymous)", "npm:zod/types.js:10", 4],
    ["reconcile", "lib/operators/webapp.ts:10", 3],
    ["(garbage collector)", "", 2],
    ["(idle)", "", 1],
  ]);
  assert.deepEqual(
    Object.fromEntries(summary.areas.map((a) => [a.name, a.ms])),
    { "kinglet lib/operators": 3, "npm:zod": 4, "(garbage collector)": 2, "(idle)": 1 },
  );

  const lines = formatSummary(summary, 2);
  assert.equal(
    lines[0],
    "Profile: 0.0 s recorded, main thread busy 0.01 s (90.0%), of which 0.00 s reporting to the inspector.",
  );
  const top = lines.indexOf("Top 2 functions by self time:");
  assert.match(lines[top + 2]!, /^\(anonymous\)\s+npm:zod\/types\.js:10\s+4\.0\s+40\.0%\s+44\.4%$/);
  assert.match(
    lines[top + 3]!,
    /^reconcile\s+lib\/operators\/webapp\.ts:10\s+3\.0\s+30\.0%\s+33\.3%$/,
  );
  assert.equal(lines[top + 4], "");
  assert.ok(
    lines.some((l) => /^= all kinglet\s+3\.0\s+30\.0%\s+33\.3%$/.test(l)),
    lines.join("\n"),
  );
  assert.ok(
    lines.some((l) => /^= all npm packages\s+4\.0\s+40\.0%\s+44\.4%$/.test(l)),
    lines.join("\n"),
  );
});
