/**
 * The test kit's least-privilege run (`cluster.serviceAccount`, then
 * `assertNoDenials`) on a real API server: the Greeting example's
 * controller, run in this process by a Manager whose client is the
 * account's, is never denied under the rules `controllerRules` derives from
 * its spec, and under the same rules minus one verb the failure names that
 * verb and resource.
 */
import assert from "node:assert/strict";
import { type KubeClient, type KubeObject } from "../../lib/kube/mod.ts";
import { installCrds, Manager } from "../../lib/runtime/mod.ts";
import { controllerRules, type ExplainedRule } from "../../lib/runtime/rbac/mod.ts";
import { type TestCluster, testCluster, waitFor } from "../../lib/testing/mod.ts";
import { greetingController } from "../../examples/greeting/greeting.ts";
import { type Greeting, greetings } from "../../examples/greeting/schema.ts";

/** How the test polls the API server: not every 10 ms, waitFor's default. */
const POLL = { timeoutMs: 30_000, intervalMs: 200 };

/** `rules` with `verb` taken off the rule that grants it on `resource`. */
function without(rules: readonly ExplainedRule[], resource: string, verb: string): ExplainedRule[] {
  const found = rules.some((rule) =>
    rule.resources.includes(resource) && rule.verbs.includes(verb)
  );
  assert.ok(found, `no rule grants ${verb} on ${resource}`);
  return rules.flatMap((rule) => {
    if (!rule.resources.includes(resource)) return [rule];
    const others = rule.resources.filter((r) => r !== resource);
    const verbs = rule.verbs.filter((v) => v !== verb);
    return [
      ...(others.length > 0 ? [{ ...rule, resources: others }] : []),
      ...(verbs.length > 0 ? [{ ...rule, resources: [resource], verbs }] : []),
    ];
  });
}

/**
 * Runs the Greeting controller with `client` while `body` runs, then stops
 * it: a Greeting `name` is created first, and deleted (and waited gone, its
 * finalizer removed by the controller) last.
 */
async function withGreeting(
  cluster: TestCluster,
  client: KubeClient,
  name: string,
  body: () => Promise<void>,
): Promise<void> {
  const manager = new Manager({
    client,
    metricsAddress: "0",
    healthAddress: "0",
    reportingInstance: "kit-test",
  });
  manager.add(greetingController);
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  const { namespace } = cluster;
  try {
    await cluster.client.create(greetings.resource, {
      apiVersion: greetings.apiVersion,
      kind: "Greeting",
      metadata: { name, namespace },
      spec: { name: "Ada" },
    } as KubeObject);
    await body();
    await cluster.client.delete(greetings.resource, name, { namespace });
    await waitFor(
      `Greeting ${name} to be gone`,
      async () =>
        await cluster.client.getOptional(greetings.resource, name, { namespace }) === undefined,
      POLL,
    );
  } finally {
    stop.abort();
    await running;
  }
}

Deno.test("the kit runs an operator under its derived RBAC and names a missing verb", async (t) => {
  await using cluster = await testCluster({ namespacePrefix: "kit" });
  await installCrds(cluster.client, [greetings.crd()], { fieldManager: "least-privilege-kit" });
  const rules = controllerRules([greetingController]);
  const { namespace } = cluster;

  await t.step("under the derived rules, the operator is never denied", async () => {
    await using account = await cluster.serviceAccount({ name: "derived", rules });
    assert.equal(account.username, `system:serviceaccount:${namespace}:derived`);
    await withGreeting(cluster, account.client, "full", async () => {
      await waitFor("the Greeting's status", async () => {
        const g = await cluster.client.get<Greeting>(greetings.resource, "full", { namespace });
        return g.status?.message === "Hello, Ada!";
      }, POLL);
    });
    account.assertNoDenials();
  });

  await t.step(
    "without patch on greetings/status, the failure names that verb and resource",
    async () => {
      const fewer = without(rules, "greetings/status", "patch");
      await using account = await cluster.serviceAccount({ name: "short", rules: fewer });
      await withGreeting(cluster, account.client, "denied", async () => {
        await waitFor("a denial", () => account.denials.length > 0, POLL);
      });
      let failure: unknown;
      try {
        account.assertNoDenials();
      } catch (error) {
        failure = error;
      }
      assert.ok(failure instanceof Error, "assertNoDenials passed despite a denial");
      assert.match(
        failure.message,
        new RegExp(
          `^- patch greetings\\.example\\.kinglet\\.dev/status \\(namespace ${namespace}\\)`,
          "m",
        ),
      );
      assert.match(failure.message, new RegExp(`ServiceAccount ${namespace}/short`));
      const other = account.denials.filter((d) => d.resource !== "greetings/status");
      assert.deepEqual(other, [], "only the verb taken away is denied");
    },
  );
});
