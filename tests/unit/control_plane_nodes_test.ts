import assert from "node:assert/strict";
import { fakeNodes } from "../../lib/testing/control_plane/_cluster_objects.ts";
import { podsPerNode } from "../../bench/harness/runner.ts";
import { parseOptions } from "../../bench/harness/options.ts";

type Node = { metadata?: { name?: string }; status?: { capacity?: Record<string, string> } };
const podsOf = (nodes: Node[]) => nodes.map((n) => [n.metadata?.name, n.status?.capacity?.pods]);

Deno.test("fake nodes take the kubelet's 110 pods each unless told otherwise, GPU nodes too", () => {
  assert.deepEqual(podsOf(fakeNodes(false) as Node[]), [
    ["kwok-node-0", "110"],
    ["kwok-node-1", "110"],
  ]);
  const big = fakeNodes(true, 5000) as Node[];
  assert.equal(big.length, 5);
  assert.ok(big.every((n) => n.status?.capacity?.pods === "5000"), JSON.stringify(podsOf(big)));
  assert.equal(big[2]!.status?.capacity?.["nvidia.com/gpu"], "8");
});

Deno.test("fake nodes refuse a pod count that is not a whole number above 0", () => {
  for (const bad of [0, -1, 2.5, NaN]) {
    assert.throws(() => fakeNodes(false, bad), /'podsPerNode' must be a whole number above 0/);
  }
});

Deno.test("a bench run's nodes each take every pod of the run and its background", () => {
  const sized = (size: number, args: string[] = []) => podsPerNode({ size }, parseOptions(args));
  assert.equal(sized(50), 110, "the kubelet's default when the run needs fewer");
  assert.equal(sized(1000), 1000);
  assert.equal(sized(1000, ["--replicas", "3"]), 3000);
  assert.equal(sized(1000, ["--replicas", "0"]), 1000, "a target may make pods of its own");
  assert.equal(sized(1000, ["--background", "realistic"]), 1060);
});
