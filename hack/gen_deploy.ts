/**
 * Writes kinglet's deploy files with the public tooling an author calls
 * (lib/deploy, `@kinglet/kinglet/deploy`), from kinglet's description:
 * its RBAC in `deploy/` (the ServiceAccount, the ClusterRole derived from
 * the specs of its controllers plus what the CLI needs, the leader
 * election's Role and their bindings, with the reasons of every rule above
 * it), its Namespace, Deployment and kustomization, the node-mode units in
 * `deploy/systemd/`, `Dockerfile.scratch` with its dockerignore, and the
 * image's file list `hack/scratch_files.txt`, and `crds/kustomization.yaml`
 * (the CRDs themselves are `deno task crds`'s). With `--check` it verifies the
 * committed files match (exit 1 with the first difference per file when
 * they do not).
 *
 * ```sh
 * deno task deploy               # regenerate
 * deno task deploy --check       # what the drift test checks
 * ```
 *
 * `--dir=<path>` points at another root than the repository's (tests use
 * it). `deploy/metrics-reader.yaml` and `deploy/samples/` are written by
 * hand.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { kingletRightsDescription } from "../lib/cli/rbac.ts";
import {
  compareDeployFiles,
  deployFiles,
  type OperatorDescription,
  writeDeployFiles,
} from "../lib/deploy/mod.ts";
import { runGenerator } from "./_generated_files.ts";
import { crdFiles } from "./gen_crds.ts";

/** The repository's root, where the paths of {@link kingletFiles} start. */
export const ROOT: string = fileURLToPath(new URL("../", import.meta.url));

/**
 * kinglet as lib/deploy describes an operator: its rights and webhooks as
 * `kinglet install` applies them (lib/cli/rbac.ts), and how it is built and run.
 */
export function kingletDescription(): OperatorDescription {
  return {
    ...kingletRightsDescription(),
    crds: [...crdFiles().keys()].map((name) => `crds/${name}`),
    manifests: ["metrics-reader.yaml"],
    memoryLimit: "256Mi",
    memoryRequest: "96Mi",
    command: ["run"],
    flags: [
      "--metrics-bind-address=:8080",
      "--metrics-auth=tokenreview",
      "--health-probe-bind-address=:8081",
    ],
    kubeconfigFlag: "--kubeconfig",
    ports: [{ name: "metrics", port: 8080 }, { name: "health", port: 8081 }],
    settings: SETTINGS,
    compileTask: "compile",
    rootfsScript: "hack/scratch_rootfs.ts",
    layout: {
      deploy: "deploy",
      dockerfile: "Dockerfile.scratch",
      scratchFiles: "hack/scratch_files.txt",
    },
    notes: NOTES,
  };
}

const NOTES: OperatorDescription["notes"] = {
  source: "lib/cli/rbac.ts",
  rbacProof: "tests/integration/deploy_manifests_test.ts checks with the API server that the " +
    "service account can do exactly this.",
  clusterRole: [
    "RBAC cannot tell an object's metadata from its data: kinglet caches only the metadata of " +
    "Secrets, yet list and watch on them read every password, cluster-wide because a " +
    "DatabaseCluster may live in any namespace.",
    "For a kinglet that watches one namespace (kinglet run --namespace <ns>), `kinglet " +
    "install --node-kubeconfig <path> --namespace <ns>` grants each rule about a namespace " +
    "(all but those of CRDs, TokenReviews and SubjectAccessReviews) by a Role kinglet in <ns> " +
    "alone, Secrets and PersistentVolumeClaims included, and keeps the others in this " +
    "ClusterRole.",
  ],
  leaseNamespaceFlag: "--leader-election-namespace",
  imageHelp: '(README, "In-cluster")',
  environment: "hack/_permissions.ts",
  memoryLimitReader: "--memory-limit",
  shutdown: "--shutdown-timeout (10s)",
  args: [
    "Probes and metrics on the pod's network; /metrics and /debug/cache only for a",
    "bearer token allowed to get them (deploy/metrics-reader.yaml), as the API server says.",
  ],
  sizing: [
    "Measured by the resource benchmark (deno task bench): 75.4 MiB idle",
    "and 87.4 MiB steady with 1,000 WebApps (bench/latest/projected),",
    "a 181.9 MiB peak while a restart relists 5,000",
    "(bench/latest/projected-restart). No CPU limit: a throttled",
    "operator renews its Lease late and loses it.",
  ],
  build: "deno task compile runs deno task build first",
  buildTask: "deno task compile",
  rootfsProof: [
    "tests/integration/scratch_rootfs_test.ts checks the x86_64 list against `ldd`,",
    "runs Deno inside exactly these files, and checks every library of both lists,",
    "taken from Debian's packages, for an ELF header of its architecture.",
  ],
  envHeader: [
    "Settings of kinglet.service, read from /etc/kinglet/kinglet.env. Each flag of",
    "`kinglet run --help` can be set here as KINGLET_<FLAG> (upper case, dashes as",
    "underscores); a flag on the ExecStart line wins. Each line, uncommented as",
    "shown, sets its default, or an example where the default depends on where",
    "kinglet runs. A variable left empty reads as unset, with a warning; an empty",
    "address or memory limit is refused (exit 2, and the unit stays stopped).",
    "kinglet-credentials.service reads this file too: the flags `kinglet install`",
    "shares with run (the namespace, the Lease's namespace, logging) apply to both.",
  ],
};

/** kinglet.env's groups, each flag of `kinglet run` with its default. */
const SETTINGS: OperatorDescription["settings"] = [
  {
    comment: [
      "Log lines: json for journald and log shippers, text to read by eye. Unset:",
      "text when standard error is a terminal, json otherwise (so json under systemd).",
    ],
    lines: ["#KINGLET_LOG_FORMAT=json", "#KINGLET_LOG_LEVEL=info"],
  },
  {
    comment: [
      "Where /metrics and /debug/cache, and /healthz and /readyz, listen: on loopback",
      "only by default, since a node's interfaces face the network. 0 turns one off.",
      "On any other address /metrics and /debug/cache answer only a bearer token the",
      "API server knows and allows to get them: KINGLET_METRICS_AUTH=tokenreview asks",
      "for that token on loopback too, none never asks.",
    ],
    lines: [
      "#KINGLET_METRICS_BIND_ADDRESS=127.0.0.1:8080",
      "#KINGLET_METRICS_AUTH=tokenreview",
      "#KINGLET_HEALTH_PROBE_BIND_ADDRESS=127.0.0.1:8081",
    ],
  },
  {
    comment: [
      "DatabaseCluster's webhooks, served by every instance while its controller runs:",
      "the API server beside kinglet calls https://127.0.0.1:9443 to convert v1alpha1",
      "and to check a named StorageClass. false turns them off (v1alpha1 requests then",
      "fail). Their CA and certificate live in the Secret kinglet-webhook-tls of the",
      "Lease's namespace unless a namespace is named.",
    ],
    lines: [
      "#KINGLET_WEBHOOKS=true",
      "#KINGLET_WEBHOOK_BIND_ADDRESS=127.0.0.1:9443",
      "#KINGLET_WEBHOOK_CERT_NAMESPACE=kinglet-system",
    ],
  },
  {
    comment: ["The Lease that elects the one instance that reconciles."],
    lines: [
      "#KINGLET_LEADER_ELECTION_NAMESPACE=kinglet-system",
      "#KINGLET_LEASE_NAME=kinglet-leader",
    ],
  },
  {
    comment: [
      "Which operators run (webapp, databasecluster, inferenceservice) and where:",
      "empty, every namespace. A namespace here also confines the rights",
      "kinglet-credentials.service grants: a Role in that namespace instead of the",
      "ClusterRole's every namespace.",
    ],
    lines: ["#KINGLET_CONTROLLERS=webapp,databasecluster,inferenceservice", "#KINGLET_NAMESPACE="],
  },
  {
    comment: ["Concurrency and the cache's memory budget (0: no cap)."],
    lines: [
      "#KINGLET_MAX_CONCURRENT_RECONCILES=8",
      "#KINGLET_CACHE_MAX_OBJECTS=0",
      "#KINGLET_CACHE_MAX_BYTES=0",
    ],
  },
  "memory-limit",
  {
    comment: ["How long SIGTERM waits for reconciles in flight."],
    lines: ["#KINGLET_SHUTDOWN_TIMEOUT=10s"],
  },
];

/**
 * Every file `deno task deploy` writes, by its path from the repository's
 * root, in the order they can be applied.
 *
 * @example
 * ```ts
 * import { kingletFiles } from "./gen_deploy.ts";
 * kingletFiles().has("deploy/systemd/kinglet.service"); // true
 * ```
 */
export function kingletFiles(): Map<string, string> {
  return deployFiles(kingletDescription());
}

/**
 * How the files under `root` differ from what kinglet's description
 * generates: one line per missing or changed file, naming its first
 * differing line. Empty when they match.
 *
 * @example
 * ```ts
 * import { compareDeploy, ROOT } from "./gen_deploy.ts";
 * await compareDeploy(ROOT); // [] when deploy/ is up to date
 * ```
 */
export function compareDeploy(root: string): Promise<string[]> {
  return compareDeployFiles(kingletDescription(), root);
}

if (import.meta.main) {
  await runGenerator({
    defaultDir: ROOT,
    compare: compareDeploy,
    write: (root) => writeDeployFiles(kingletDescription(), root),
    outOfDate: "The deploy files are out of date: run `deno task deploy` and commit deploy/, " +
      "Dockerfile.scratch, hack/scratch_files.txt and crds/kustomization.yaml.",
    count: `${kingletFiles().size} files`,
  }, Deno.args);
}
