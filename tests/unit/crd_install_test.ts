import assert from "node:assert/strict";
import { FakeClock } from "../../lib/async/mod.ts";
import { ApiError, type KubeObject, type Resource } from "../../lib/kube/mod.ts";
import { CrdWaitError, installCrds, uninstallCrds } from "../../lib/runtime/crds/mod.ts";

const CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "backups.example.com" },
  spec: { names: { kind: "Backup", plural: "backups" } },
};

const notFound = () => new ApiError({ status: 404, message: "not found", verb: "GET", path: "/" });

/** A CRD API that answers GETs from a script, one answer per read, the last one repeated. */
class FakeCrds {
  readonly applied: { object: KubeObject; fieldManager: string; force?: boolean }[] = [];
  readonly deleted: string[] = [];
  reads = 0;
  constructor(readonly answers: (KubeObject | Error)[]) {}

  apply<T extends KubeObject>(
    resource: Resource,
    object: T,
    options: { fieldManager: string; force?: boolean },
  ): Promise<T> {
    assert.equal(resource.kind, "CustomResourceDefinition");
    this.applied.push({ object, fieldManager: options.fieldManager, force: options.force });
    return Promise.resolve(object);
  }

  get<T extends KubeObject>(): Promise<T> {
    const answer = this.answers[Math.min(this.reads++, this.answers.length - 1)]!;
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as T);
  }

  delete(_: Resource, name: string): Promise<void> {
    if (this.answers[0] instanceof Error) return Promise.reject(this.answers[0]);
    this.deleted.push(name);
    return Promise.resolve();
  }
}

const withConditions = (...conditions: Record<string, string>[]) => ({
  ...CRD,
  status: { conditions },
});

Deno.test("installCrds applies each CRD with its field manager and waits until it is Established", async () => {
  const clock = new FakeClock();
  const crds = new FakeCrds([
    withConditions({ type: "NamesAccepted", status: "True" }),
    withConditions({ type: "Established", status: "True" }),
  ]);
  const installed = installCrds(crds, [CRD], { fieldManager: "backup-operator", clock });
  await clock.advance(250);
  assert.deepEqual(await installed, ["backups.example.com"]);
  assert.deepEqual(crds.applied, [{ object: CRD, fieldManager: "backup-operator", force: true }]);
  assert.equal(crds.reads, 2);
});

Deno.test("installCrds names the CRD and its conditions when it is not Established in time", async () => {
  const clock = new FakeClock();
  const crds = new FakeCrds([
    withConditions(
      { type: "NamesAccepted", status: "False", reason: "ListKindConflict", message: "taken" },
      { type: "Established", status: "False", reason: "NotAccepted" },
    ),
  ]);
  const installed = installCrds(crds, [CRD], { fieldManager: "op", timeoutMs: 1_000, clock });
  const failed = assert.rejects(installed, (error: Error) => {
    assert.ok(error instanceof CrdWaitError);
    assert.equal(error.crd, "backups.example.com");
    assert.equal(
      error.message,
      "CRD backups.example.com is not Established after 1s; conditions: " +
        "NamesAccepted=False (ListKindConflict: taken), Established=False (NotAccepted). " +
        "Check the API server log.",
    );
    return true;
  });
  await clock.advance(1_000);
  await failed;
});

Deno.test("installCrds refuses a missing field manager, a bad timeout and objects that are not CRDs", async () => {
  const crds = new FakeCrds([CRD]);
  await assert.rejects(
    installCrds(crds, [CRD], { fieldManager: "" }),
    /^TypeError: Cannot install CRDs: 'fieldManager' must be a non-empty string, got ""$/,
  );
  await assert.rejects(
    installCrds(crds, [CRD], { fieldManager: "op", timeoutMs: 0 }),
    /^RangeError: Cannot install CRDs: 'timeoutMs' must be a positive number, got 0$/,
  );
  await assert.rejects(
    installCrds(crds, [{ ...CRD, kind: "ConfigMap" }], { fieldManager: "op" }),
    /crds\[0\] \(backups\.example\.com\) must be a CustomResourceDefinition, got kind "ConfigMap"/,
  );
  assert.deepEqual(crds.applied, [], "nothing is applied after a refusal");
});

Deno.test("uninstallCrds deletes each CRD and waits until it is gone", async () => {
  const clock = new FakeClock();
  const crds = new FakeCrds([CRD, CRD, notFound()]);
  const removed = uninstallCrds(crds, [CRD], { clock });
  await clock.advance(250);
  await clock.advance(250);
  assert.deepEqual(await removed, ["backups.example.com"]);
  assert.deepEqual(crds.deleted, ["backups.example.com"]);
  assert.equal(crds.reads, 3);
});

Deno.test("uninstallCrds passes over a CRD that is already gone", async () => {
  const crds = new FakeCrds([notFound()]);
  assert.deepEqual(await uninstallCrds(crds, ["backups.example.com"]), []);
  assert.equal(crds.reads, 0);
});

Deno.test("uninstallCrds says which objects hold a terminating CRD when the wait ends", async () => {
  const clock = new FakeClock();
  const terminating = withConditions({
    type: "Terminating",
    status: "True",
    reason: "InstanceDeletionInProgress",
  });
  const crds = new FakeCrds([terminating]);
  const removed = uninstallCrds(crds, ["backups.example.com"], { timeoutMs: 2_000, clock });
  const failed = assert.rejects(removed, (error: Error) => {
    assert.ok(error instanceof CrdWaitError);
    assert.match(
      error.message,
      /^CRD backups\.example\.com is still terminating after 2s: its Backups wait for their finalizers/,
    );
    assert.match(error.message, /Terminating=True \(InstanceDeletionInProgress\)/);
    return true;
  });
  await clock.advance(2_000);
  await failed;
});
