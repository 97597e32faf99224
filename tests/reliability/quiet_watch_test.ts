/**
 * A healthy operator with nothing to do writes no warning: its watches hear
 * nothing for minutes (label-filtered watches of resources nobody writes get
 * no bookmarks), and only the server ending each watch at its timeout says
 * that the connection lives. The test shortens the watch timeout so that it
 * can hold the operator idle for longer than the stall deadline.
 */
import assert from "node:assert/strict";
import { adminClient, createNamespace, deleteNamespace } from "../_support/kube.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import { startOperator } from "../_support/operator.ts";

const WATCH_TIMEOUT_S = 5;
/** The watcher's default stall deadline: the watch timeout plus its 30 s grace. */
const STALL_DEADLINE_MS = WATCH_TIMEOUT_S * 1000 + 30_000;

Deno.test("an idle operator held past the stall deadline writes no warning, its quiet watches resumed as the server ends them", async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const namespace = await createNamespace(client, "quiet");
  await using operator = await startOperator({
    kubeconfig: await operatorKubeconfig(),
    args: [`--namespace=${namespace}`, `--watch-timeout=${WATCH_TIMEOUT_S}s`, "--log-level=debug"],
  });
  try {
    await operator.ready();
    await new Promise((resolve) => setTimeout(resolve, STALL_DEADLINE_MS + 5_000));
    const lines = (await operator.log()).split("\n").filter((l) => l.startsWith("{"));
    const levels = lines.map((l) => JSON.parse(l) as { level: string; message: string });
    const loud = levels.filter((l) => ["WARN", "ERROR", "FATAL"].includes(l.level));
    assert.deepEqual(loud.map((l) => l.message), [], "an idle operator warned");
    const resumed = levels.filter((l) => /closed by the server; resuming/.test(l.message));
    assert.ok(
      resumed.length >= 6,
      `the server ended the quiet watches (${resumed.length} resumed), so the test held them past a timeout`,
    );
    const ready = await fetch(`${operator.healthUrl}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
  } finally {
    await deleteNamespace(client, namespace);
    client.close();
  }
});
