/**
 * The example operator of "Write your own operator" in
 * docs/writing-operators.md, run as its readers run it (`deno run
 * examples/greeting/main.ts` with the permissions the guide gives), against
 * the real control plane, after its CRD is applied from
 * `examples/greeting/crds/` as a user applies it, as a ServiceAccount bound
 * to exactly the RBAC derived from its controller spec: a request it is
 * denied fails the test, naming the verb and the resource.
 */
import assert from "node:assert/strict";
import { CONFIG_MAPS, type KubeObject } from "../../lib/kube/mod.ts";
import { controllerRules } from "../../lib/runtime/mod.ts";
import { testCluster } from "../../lib/testing/mod.ts";
import { greetingController } from "../../examples/greeting/greeting.ts";
import { type Greeting, GREETINGS } from "../../examples/greeting/kind.ts";
import { applyExampleCrds, dropFinalizers, startExample } from "./_example.ts";
import { eventsFor, getOrUndefined } from "../_support/kube.ts";

function greeting(namespace: string, name: string, spec: { name: string }): KubeObject {
  return {
    apiVersion: "example.kinglet.dev/v1",
    kind: "Greeting",
    metadata: { name, namespace },
    spec,
  };
}

Deno.test("the Greeting example renders, repairs, updates and says goodbye", async (t) => {
  await using cluster = await testCluster({ namespacePrefix: "e2e-greeting" });
  await applyExampleCrds(cluster.client, "greeting");
  await using account = await cluster.serviceAccount({
    name: "greeting-operator",
    rules: controllerRules([greetingController]),
    // Its writes confined to what it owns, as the ownership policy deploy generates does.
    policy: [greetingController],
  });
  const { client, namespace } = cluster;
  const example = startExample("greeting", account.kubeconfig);
  const { waitFor } = example; // fails at once when the example is denied a request
  try {
    await example.ready();
    const message = (expected: string) =>
      waitFor(`ConfigMap ada-greeting to say "${expected}"`, async () => {
        const cm = await getOrUndefined<KubeObject & { data?: { message?: string } }>(
          client,
          CONFIG_MAPS,
          "ada-greeting",
          namespace,
        );
        return cm?.data?.message === expected && cm;
      });

    await t.step(
      "a new Greeting gets its ConfigMap, a status, an Event and a finalizer",
      async () => {
        await client.create(GREETINGS, greeting(namespace, "ada", { name: "Ada" }));
        const cm = await message("Hello, Ada!");
        const ada = await waitFor("the Greeting's status", async () => {
          const g = await client.get<Greeting>(GREETINGS, "ada", { namespace });
          return g.status?.message === "Hello, Ada!" && g;
        });
        assert.equal(ada.status?.configMap, "ada-greeting");
        assert.equal(ada.status?.observedGeneration, ada.metadata?.generation);
        assert.deepEqual(ada.metadata?.finalizers, ["example.kinglet.dev/farewell"]);
        assert.equal(cm.metadata?.ownerReferences?.[0]?.uid, ada.metadata?.uid);
        await waitFor(
          "a Rendered Event",
          async () => (await eventsFor(client, namespace, "ada", "Rendered")).length > 0,
        );
      },
    );

    await t.step("a deleted ConfigMap comes back", async () => {
      await client.delete(CONFIG_MAPS, "ada-greeting", { namespace });
      await message("Hello, Ada!");
    });

    await t.step("a changed spec renders a new message", async () => {
      await client.patch(GREETINGS, "ada", { spec: { greeting: "Welcome" } }, {
        type: "merge",
        namespace,
      });
      await message("Welcome, Ada!");
    });

    await t.step("a deleted Greeting says goodbye, then goes with its ConfigMap", async () => {
      await client.delete(GREETINGS, "ada", { namespace });
      await waitFor(
        "the Greeting to be gone",
        async () => (await getOrUndefined(client, GREETINGS, "ada", namespace)) === undefined,
      );
      const farewell = await waitFor(
        "a Farewell Event",
        async () => (await eventsFor(client, namespace, "ada", "Farewell"))[0],
      );
      assert.equal(farewell.note, "Goodbye, Ada!");
      await waitFor(
        "the ConfigMap to be collected",
        async () =>
          (await getOrUndefined(client, CONFIG_MAPS, "ada-greeting", namespace)) === undefined,
      );
    });

    const code = await example.stop();
    example.assertNoDenials();
    assert.equal(code, 0, example.output());
  } finally {
    await example.stop();
    await dropFinalizers(client, GREETINGS, namespace);
  }
});
