import assert from "node:assert/strict";
import { logger, resetLogging, setupLogging } from "../../lib/log.ts";

const T0 = Date.UTC(2026, 10, 24, 14, 0, 0, 123);

function capture(format: "json" | "text", level: "debug" | "info" | "warning" = "info") {
  const lines: string[] = [];
  setupLogging({ format, level, write: (line) => lines.push(line), now: () => T0 });
  return lines;
}

Deno.test("json lines keep LogTape's shape: timestamp, level, message, logger, properties", () => {
  const lines = capture("json");
  try {
    logger("watcher").warn("watch of {resource} failed: {error}", {
      resource: "webapps",
      error: new Error("connection reset"),
    });
    assert.equal(lines.length, 1);
    assert.ok(lines[0]!.endsWith("\n"));
    const record = JSON.parse(lines[0]!);
    assert.equal(record["@timestamp"], "2026-11-24T14:00:00.123Z");
    assert.equal(record.level, "WARN");
    assert.equal(record.message, 'watch of "webapps" failed: connection reset');
    assert.equal(record.logger, "kinglet.watcher");
    assert.equal(record.properties.resource, "webapps");
    assert.equal(record.properties.error.message, "connection reset");
  } finally {
    resetLogging();
  }
});

Deno.test("text lines read as sentences: values quoted only where they hold spaces", () => {
  const lines = capture("text");
  try {
    logger("main").info("kinglet {version} starting: {controllers} against {server} as {who}", {
      version: "0.1.0",
      controllers: "webapp,databasecluster",
      server: "https://127.0.0.1:6443",
      who: "node one",
    });
    assert.deepEqual(lines, [
      "2026-11-24 14:00:00.123 +00:00 [INF] kinglet·main: kinglet 0.1.0 starting: " +
      'webapp,databasecluster against https://127.0.0.1:6443 as "node one"\n',
    ]);
  } finally {
    resetLogging();
  }
});

Deno.test("levels below the chosen one are not written, and nothing is before set-up", () => {
  resetLogging();
  logger("x").error("dropped");
  const lines = capture("json", "warning");
  try {
    logger("x").info("dropped too");
    logger("x").debug("and this");
    logger("x").error("kept {n}", { n: 1 });
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]!).message, "kept 1");
  } finally {
    resetLogging();
  }
});

Deno.test("a template keeps unknown placeholders and doubled braces as written", () => {
  const lines = capture("text");
  try {
    logger("x").info("{{literal}} {missing} {n}", { n: 2 });
    assert.match(lines[0]!, /kinglet·x: \{literal\} \{missing\} 2\n$/);
  } finally {
    resetLogging();
  }
});

Deno.test("bad logging options are refused with what was given", () => {
  assert.throws(
    // @ts-expect-error: the level is checked at run time too
    () => setupLogging({ level: "verbose" }),
    new RangeError(
      "Cannot set up logging: 'level' must be one of trace, debug, info, warning, error, fatal, " +
        'got "verbose"',
    ),
  );
  // @ts-expect-error: the format is checked at run time too
  assert.throws(() => setupLogging({ format: "xml" }), RangeError);
});
