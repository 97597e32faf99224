import assert from "node:assert/strict";
import { testCluster } from "../../lib/testing/cluster.ts";

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof Error, `expected an error, got ${error}`);
  return error;
}

Deno.test("with neither variable set, the fixture says which to set and where each comes from", async () => {
  const error = await failure(testCluster({ env: {} }));
  assert.equal(error.constructor, Error);
  assert.match(error.message, /neither KINGLET_TEST_KUBECONFIG nor KUBEBUILDER_ASSETS is set/);
  assert.match(error.message, /deno run -A hack\/with_cluster\.ts -- deno test -A <files>/);
  assert.match(error.message, /setup-envtest use -p path/);
  assert.match(error.message, /deno task control-plane/);
  assert.match(
    error.message,
    /~\/\.cache\/kinglet\/control-plane\/k8s-<version>-etcd-<version>-kwok-<version>\/bin/,
  );
});

Deno.test("empty variables count as unset", async () => {
  const error = await failure(
    testCluster({ env: { KINGLET_TEST_KUBECONFIG: "", KUBEBUILDER_ASSETS: "" } }),
  );
  assert.match(error.message, /neither KINGLET_TEST_KUBECONFIG nor KUBEBUILDER_ASSETS is set/);
});

Deno.test("a KUBEBUILDER_ASSETS folder without the binaries is named with what it lacks", async () => {
  const assets = await Deno.makeTempDir({ prefix: "kinglet_assets_" });
  try {
    await Deno.writeTextFile(`${assets}/etcd`, "#!/bin/sh\n", { mode: 0o755 });
    await Deno.writeTextFile(`${assets}/kube-apiserver`, "not executable", { mode: 0o644 });
    const error = await failure(testCluster({ env: { KUBEBUILDER_ASSETS: assets } }));
    assert.equal(
      error.message,
      `Cannot start a test cluster: KUBEBUILDER_ASSETS=${assets} holds no executable ` +
        "kube-apiserver; point it at a folder with both etcd and kube-apiserver",
    );
    await Deno.remove(`${assets}/etcd`);
    const both = await failure(testCluster({ env: { KUBEBUILDER_ASSETS: assets } }));
    assert.match(both.message, /holds no executable etcd nor kube-apiserver;/);
  } finally {
    await Deno.remove(assets, { recursive: true });
  }
});

Deno.test("KINGLET_TEST_KUBECONFIG wins over KUBEBUILDER_ASSETS", async () => {
  const error = await failure(testCluster({
    env: { KINGLET_TEST_KUBECONFIG: "/nonexistent/kubeconfig", KUBEBUILDER_ASSETS: "/nonexistent" },
  }));
  assert.match(error.message, /\/nonexistent\/kubeconfig/);
  assert.doesNotMatch(error.message, /KUBEBUILDER_ASSETS/);
});

Deno.test("a namespace prefix that is no DNS label is refused before anything starts", async () => {
  const error = await failure(testCluster({ namespacePrefix: "My_Tests", env: {} }));
  assert.ok(error instanceof RangeError);
  assert.equal(
    error.message,
    "Cannot start a test cluster: 'namespacePrefix' must be a DNS label of at most 50 characters, " +
      'got "My_Tests"',
  );
  await failure(testCluster({ namespacePrefix: "x".repeat(51), env: {} })).then((e) =>
    assert.ok(e instanceof RangeError)
  );
});

Deno.test("a datastore that exits at once fails the start with the end of its log, its folder kept", async () => {
  const assets = await Deno.makeTempDir({ prefix: "kinglet_assets_" });
  try {
    await Deno.writeTextFile(
      `${assets}/etcd`,
      "#!/bin/sh\necho 'etcd: unknown flag --unsafe-no-fsync' >&2\nexit 3\n",
      { mode: 0o755 },
    );
    await Deno.writeTextFile(`${assets}/kube-apiserver`, "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    const error = await failure(testCluster({ env: { KUBEBUILDER_ASSETS: assets } }));
    assert.match(
      error.message,
      /^Cannot start the local control plane from .*: etcd exited with code 3 while waiting for etcd to become healthy\. Last lines of (.*)\/logs\/etcd\.log:\netcd: unknown flag --unsafe-no-fsync\n\(the files of this start are kept in (.*)\)$/,
    );
    const kept = error.message.match(/kept in (.*)\)$/)![1]!;
    assert.ok((await Deno.stat(`${kept}/logs/etcd.log`)).isFile);
    await Deno.remove(kept, { recursive: true });
  } finally {
    await Deno.remove(assets, { recursive: true });
  }
});
