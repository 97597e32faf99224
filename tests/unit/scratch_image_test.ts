import assert from "node:assert/strict";
import { SCRATCH_ARCHES, scratchFiles } from "../../hack/scratch_rootfs.ts";

Deno.test("the image builds for every architecture that has a file list, each with its own loader", async () => {
  const dockerfile = await Deno.readTextFile(
    new URL("../../Dockerfile.scratch", import.meta.url),
  );
  const mapped = [...dockerfile.matchAll(/^\s+(amd64|arm64)\) arch=(\w+) ;;/gm)].map((m) => m[2]);
  assert.deepEqual(mapped.sort(), [...SCRATCH_ARCHES].sort());
  const loaders = await Promise.all(
    SCRATCH_ARCHES.map(async (arch) =>
      (await scratchFiles(arch)).filter((p) => /ld-linux/.test(p))
    ),
  );
  assert.deepEqual(loaders, [["/lib64/ld-linux-x86-64.so.2"], ["/lib/ld-linux-aarch64.so.1"]]);
});
