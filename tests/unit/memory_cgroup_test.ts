import assert from "node:assert/strict";
import { resetLogging, setupLogging } from "../../lib/log.ts";
import {
  CGROUP_MEMORY_FILES,
  cgroupMemoryLimit,
  parseCgroupMemory,
} from "../../lib/runtime/memory/cgroup.ts";

const V2 = "/sys/fs/cgroup/memory.max";
const V1 = "/sys/fs/cgroup/memory/memory.limit_in_bytes";

/** Reads from `files`, absent paths as missing files; logs land in `warnings`. */
function withFiles(files: Record<string, string>) {
  const warnings: string[] = [];
  setupLogging({ format: "json", write: (line) => warnings.push(JSON.parse(line).message) });
  const read = (path: string) => files[path];
  return { read, warnings, [Symbol.dispose]: resetLogging };
}

Deno.test("cgroup memory text: bytes, max, v1's unlimited, and garbage", () => {
  assert.equal(parseCgroupMemory("67108864\n"), 67108864);
  assert.equal(parseCgroupMemory("max\n"), undefined);
  assert.equal(parseCgroupMemory("9223372036854771712\n"), undefined);
  assert.equal(parseCgroupMemory("9223372036854775807"), undefined);
  assert.equal(parseCgroupMemory("0"), null);
  assert.equal(parseCgroupMemory("-1"), null);
  assert.equal(parseCgroupMemory("64Mi"), null);
  assert.equal(parseCgroupMemory(""), null);
});

Deno.test("cgroup limit comes from cgroup v2's memory.max when it has one", () => {
  using files = withFiles({ [V2]: "536870912\n", [V1]: "1024\n" });
  assert.deepEqual(cgroupMemoryLimit(files), { bytes: 536870912, path: V2 });
  assert.deepEqual(files.warnings, []);
  assert.deepEqual(CGROUP_MEMORY_FILES, [V2, V1]);
});

Deno.test("cgroup v2's max means no limit, without looking further", () => {
  using files = withFiles({ [V2]: "max\n", [V1]: "1024\n" });
  assert.equal(cgroupMemoryLimit(files), undefined);
  assert.deepEqual(files.warnings, []);
});

Deno.test("cgroup v1's limit_in_bytes is read where cgroup v2's file is missing", () => {
  using files = withFiles({ [V1]: "268435456\n" });
  assert.deepEqual(cgroupMemoryLimit(files), { bytes: 268435456, path: V1 });
  using unlimited = withFiles({ [V1]: "9223372036854771712\n" });
  assert.equal(cgroupMemoryLimit(unlimited), undefined);
  using none = withFiles({});
  assert.equal(cgroupMemoryLimit(none), undefined);
  assert.deepEqual([...files.warnings, ...unlimited.warnings, ...none.warnings], []);
});

Deno.test("a cgroup file holding garbage is ignored with one line naming the file and its text", () => {
  using files = withFiles({ [V2]: "lots\n" });
  assert.equal(cgroupMemoryLimit(files), undefined);
  assert.deepEqual(files.warnings, [
    `ignoring the container's memory limit: "${V2}" holds "lots", not a byte count nor "max"; ` +
    "set the memory limit explicitly to keep one",
  ]);
});

Deno.test("a cgroup file the system refuses is ignored with one line saying why", () => {
  using logs = withFiles({});
  const refused = () => {
    throw new Deno.errors.PermissionDenied(`Permission denied (os error 13): readfile '${V2}'`);
  };
  assert.equal(cgroupMemoryLimit({ read: refused }), undefined);
  assert.equal(logs.warnings.length, 1);
  assert.match(logs.warnings[0]!, /memory\.max" cannot be read \(.*os error 13/);
});

Deno.test("a cgroup file Deno may not read is no limit, without a warning: only --allow-all reads /sys", () => {
  using logs = withFiles({});
  const denied = () => {
    throw new Deno.errors.NotCapable(`Requires all access to "${V2}"`);
  };
  assert.equal(cgroupMemoryLimit({ read: denied }), undefined);
  assert.deepEqual(logs.warnings, []);
});
