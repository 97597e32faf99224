/** The start-up hint when a CRD is missing: a command that works where kinglet runs. */
import assert from "node:assert/strict";
import { checkCrds, crdInstallHint } from "../../lib/cli/crd_check.ts";
import { ApiError } from "../../lib/kube/errors.ts";

/** An API server without kinglet's CRDs. */
const noCrds = {
  get: (_resource: unknown, name: string) =>
    Promise.reject(
      new ApiError({
        status: 404,
        message: `customresourcedefinitions.apiextensions.k8s.io "${name}" not found`,
        verb: "GET",
        path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      }),
    ),
} as Parameters<typeof checkCrds>[0];

Deno.test("on a node the hint names the credentials unit and an admin kubeconfig, never kinglet's own", async () => {
  const problem = await checkCrds(
    noCrds,
    ["webapps.kinglet.dev"],
    crdInstallHint({ inCluster: false }),
  );
  assert.equal(
    problem,
    "CRD webapps.kinglet.dev is not installed; run: kinglet install --kubeconfig " +
      "<a cluster-admin kubeconfig> (not kinglet's own credentials: they may read CRDs, not " +
      "install them); on a node set up from deploy/systemd/, as root: systemctl start " +
      "kinglet-credentials.service, which installs them with k3s.yaml",
  );
  assert.doesNotMatch(problem, /\/var\/lib\/kinglet/);
});

Deno.test("in a cluster the hint names an admin kubeconfig and no systemd unit", async () => {
  const problem = await checkCrds(
    noCrds,
    ["webapps.kinglet.dev", "databaseclusters.kinglet.dev"],
    crdInstallHint({ inCluster: true }),
  );
  assert.match(
    problem ?? "",
    /^CRDs webapps\.kinglet\.dev, databaseclusters\.kinglet\.dev are not installed; run: kinglet install --kubeconfig <a cluster-admin kubeconfig> \(not kinglet's own credentials/,
  );
  assert.doesNotMatch(problem ?? "", /systemctl/);
});

Deno.test("the credentials unit the hint names installs the CRDs with the k3s admin kubeconfig", async () => {
  const unit = await Deno.readTextFile(
    new URL("../../deploy/systemd/kinglet-credentials.service", import.meta.url),
  );
  assert.match(
    crdInstallHint({ inCluster: false }),
    /systemctl start kinglet-credentials\.service/,
  );
  // `kinglet install` applies the CRDs before the node credentials, whatever else it is told.
  assert.match(unit, /^ExecStart=\/usr\/local\/bin\/kinglet install --kubeconfig %d\/admin /m);
  assert.match(unit, /^LoadCredential=admin:\/etc\/rancher\/k3s\/k3s\.yaml$/m);
  // A oneshot without RemainAfterExit= is inactive once done, so `systemctl start` runs it again.
  assert.match(unit, /^Type=oneshot$/m);
  assert.doesNotMatch(unit, /^RemainAfterExit=yes$/m);
});
