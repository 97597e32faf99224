/**
 * The generated project's README: what the operator does, where kinglet comes
 * from, and the tasks.
 *
 * @module
 */
import { envPrefix } from "../../build/grants.ts";
import { RUN_PERMISSIONS } from "./config_files.ts";
import { KINGLET_FILES, type KingletRecord, VENDOR_DIR } from "../../build/vendor.ts";
import { MODULES } from "./dependency.ts";
import type { ProjectNames } from "./names.ts";

/** `README.md` of a project whose import map points at the kinglet of `kinglet`. */
export function readmeMd(n: ProjectNames, kinglet: KingletRecord): string {
  const names = Object.keys(MODULES).map((name, i) =>
    i === 0 ? `\`${name}\`` : `\`${name.slice("@kinglet/kinglet".length)}\``
  );
  const modules = `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
  return `# ${n.operator}

A Kubernetes operator on kinglet, made by \`kinglet init\`. A \`${n.kind}\` (\`${n.crdName}\`) ${
    n.namespaced
      ? "holds a message; its controller writes it into a ConfigMap it owns"
      : "is cluster-scoped and holds a message and a namespace; its controller writes the message into a ConfigMap it owns in that namespace"
  }, named \`<name>-${n.childSuffix}\`, puts it back when it is changed or deleted, and reports a \`Ready\` condition with \`observedGeneration\`.

## Layout

- \`src/kind.ts\`: the kind at run time, its \`Resource\` (\`${n.resourceConst}\`) and the \`${n.kind}\` type, with no zod loaded
- \`src/schema.ts\`: the kind's zod schemas, which \`defineKind\` turns into the CRD and the \`${n.kind}\` type, named by \`src/kind.ts\`; only \`deno task crds\` and the tests load it, so zod stays off the operator's run path, as in kinglet's own operators
- \`src/controller.ts\`: \`renderConfigMap\`, a pure function of a ${n.kind}, and the \`ControllerSpec\` whose \`reconcile\` applies it and sets the condition
- \`main.ts\`: the \`Manager\`, which runs the controller, serves \`/metrics\`, \`/healthz\` and \`/readyz\`, stops on SIGINT or SIGTERM; it does not install the CRD, which is applied from \`crds/\` first
- \`tests/unit/\`: the controller in a \`Manager\` over \`MemoryCluster\`, kinglet's in-memory API server, on a \`FakeClock\`
- \`tests/e2e/\`: \`main.ts\` as a process against a real API server from \`testCluster()\`, after the CRD is applied from \`crds/\`
- \`scripts/crds.ts\`: writes \`crds/${n.crdName}.yaml\` from the schema
- \`src/operator.ts\`: the operator as its deploy files describe it (name, image, namespace, Lease, memory limit); \`scripts/deploy.ts\` writes \`deploy/\` from it
- \`bench/target.json\`: what kinglet's benchmark creates of this kind and when it counts as ready; \`scripts/bench.ts\` runs the operator for it as \`deno task build\` ships it

## kinglet

\`deno.json\` maps kinglet's modules, ${modules}, to ${
    kingletSource(kinglet)
  } Once kinglet is on JSR, these entries become one and no code changes. \`zod\` is mapped to the version kinglet's \`./crd\` loads, so that the schemas and \`defineKind\` share one copy.

## Tasks

- \`deno task check\`: format, lint and type-check
- \`deno task test\`: the unit tests, no cluster needed
- \`deno task e2e\`: \`deno task crds\`, then the e2e test; set \`KINGLET_TEST_KUBECONFIG\` to the kubeconfig of a cluster it may write to, or \`KUBEBUILDER_ASSETS\` to a folder holding \`etcd\` and \`kube-apiserver\`
- \`deno task crds\`: write the CRD to \`crds/\`
- \`deno task start\`: run the operator against the cluster your kubeconfig reaches
- \`deno task deploy\`: write \`deploy/\` from \`src/operator.ts\`: the RBAC derived from the controller, the Namespace, the Deployment and the kustomization (\`deno task crds\`, then \`kubectl apply -k deploy/\`), the systemd units of node mode in \`deploy/systemd/\`, and the FROM scratch image's \`deploy/Dockerfile.scratch\`; \`--check\` says what drifted, as \`tests/unit/deploy_test.ts\` does
- \`deno task bench\`: kinglet's benchmark against this operator as \`deno task build\` ships it (the bundle, with the grants, V8 flags, \`--no-code-cache\` and environment of its binary, from \`@kinglet/kinglet/build\`), by \`bench/target.json\`, beside the Deno floor; it needs the harness of a kinglet checkout (\`kinglet init --kinglet <checkout>\`)
- \`deno task build\`: kinglet's own build: the minified bundle \`dist/bundle/main.js\`, then one binary per Linux target, \`dist/${n.operator}-x86_64-unknown-linux-gnu\` and \`dist/${n.operator}-aarch64-unknown-linux-gnu\`, with kinglet's V8 flags, \`--no-code-cache\` and the Deno permissions the operator needs baked in (\`${
    envPrefix(n.operator)
  }_ALLOW_<KIND>\` widens them, e.g. \`${
    envPrefix(n.operator)
  }_ALLOW_READ=/path/to/kubeconfig\`); \`deno task build --bundle-only\` stops after the bundle. A binary needs \`denort\` of exactly the Deno that builds: where dl.deno.land is unreachable, set \`DENORT_BIN\` to an unzipped one (one target per build)

Then try it:

\`\`\`sh
deno task crds && kubectl apply -f crds/${n.crdName}.yaml
deno task start &
kubectl apply -f - <<'YAML'
apiVersion: ${n.apiVersion}
kind: ${n.kind}
metadata: { name: sample }
spec: { message: Hello${n.namespaced ? "" : ", namespace: default"} }
YAML
kubectl get ${n.plural}                  # READY True
kubectl get configmap sample-${n.childSuffix} -o yaml${n.namespaced ? "" : " --namespace default"}
\`\`\`

\`deno task start\` runs \`main.ts\` with \`${RUN_PERMISSIONS}\`. See kinglet's docs/writing-operators.md, "Write your own operator", for finalizers, error policies, leader election and Events.
`;
}

/** Where the project's kinglet is and how it is pinned, a paragraph of "kinglet". */
function kingletSource(kinglet: KingletRecord): string {
  const { version, commit, source } = kinglet;
  if (!kinglet.sha256) {
    const which = version
      ? `, kinglet ${version}${
        commit ? ` at commit \`${commit}\`` : ""
      } when \`kinglet init\` wrote this project`
      : "";
    return `kinglet's sources at \`${source}\`${which}, as \`kinglet init --kinglet\` was told; \`kinglet.json\` records it.`;
  }
  const files = KINGLET_FILES.map((path) => path.replace(/\/$/, "")).join(" ");
  const from = commit
    ? `kinglet ${version} at commit \`${commit}\`${
      kinglet.uncommitted ? " with changes not committed (its SHA-256 alone pins it)" : ""
    }`
    : `kinglet ${version} (not from a git checkout: its SHA-256 alone pins it)`;
  return `\`${VENDOR_DIR}\`, a copy of the files kinglet publishes, vendored by \`kinglet init\` from ${from}. Commit it with the project. \`kinglet.json\` records which kinglet it is (version, commit, and the SHA-256 of the copy's paths and contents), and \`tests/unit/kinglet_test.ts\` fails when the copy differs from it. The same copy comes back from the commit alone: \`git -C <kinglet checkout> archive ${
    commit ?? "<commit>"
  } ${files} | tar -x -C ${VENDOR_DIR}\`. To move to another kinglet, run that kinglet's vendoring here, which replaces the copy and rewrites \`kinglet.json\`: \`deno run --allow-read --allow-write=vendor,kinglet.json --allow-run=git <kinglet checkout>/lib/build/vendor.ts .\``;
}
