/**
 * An operator's test under least privilege: {@link testServiceAccount} (or
 * `TestCluster.serviceAccount`) creates a ServiceAccount in the test's
 * namespace, bound to exactly the rules it is given, and hands back a
 * kubeconfig and a client that authenticate as it, with a token from the
 * TokenRequest API (asked through the admin client: no kubectl needed).
 * Give it the rules `controllerRules(specs)` derives (plus
 * `leaderElectionRules(lease)` in the Lease's namespace when the operator
 * elects a leader), run the operator with its client or kubeconfig, then
 * `assertNoDenials()`: the test fails naming every verb and resource the
 * rules lack. That is the proof that the RBAC an operator ships suffices.
 *
 * What the caller must know:
 *
 * - `rules` go into a ClusterRole bound by a ClusterRoleBinding: granted in
 *   every namespace, as an operator watching all namespaces needs;
 *   `namespaced` rules go into a Role and a RoleBinding in their namespace.
 *   Extra fields of a derived rule (`reasons`, `clusterScoped`) are dropped.
 * - With `policy: specs`, the account is confined as deployed, past RBAC:
 *   the ValidatingAdmissionPolicy `ownershipPolicy` derives admits its
 *   writes only to objects the specs own, so the test also proves the
 *   policy refuses none of the operator's own work. The API server applies
 *   it a moment after its binding is written, with nothing to wait on: a
 *   test that must see a refusal retries until it comes.
 * - RBAC takes effect a moment after a binding is written; the account is
 *   returned once the API server allows the first rule of each role, so the
 *   operator's first requests are not denied by that delay.
 * - Only the requests of {@link TestServiceAccount.client} are recorded. An
 *   operator run as a process with {@link TestServiceAccount.kubeconfig}
 *   reports its denials in its log: read them with `denialsInLog`.
 * - Both kinds of test cluster mint tokens: the TokenRequest API is served
 *   by kube-apiserver itself when it has a signing key
 *   (`--service-account-signing-key-file`), which the fixture gives the one
 *   it starts from `KUBEBUILDER_ASSETS` (no controller manager needed), as
 *   every real cluster's has. The token is never refreshed: it lasts
 *   `expirationSeconds`.
 * - Dispose of the account (`await using`) before the cluster: it deletes
 *   what it created, the cluster-wide ClusterRole and ClusterRoleBinding
 *   included, which the test namespace's deletion would leave behind.
 *
 * @example An operator's rules, proven sufficient
 * ```ts ignore
 * import { testCluster } from "./mod.ts";
 * import { controllerRules, Manager } from "../runtime/mod.ts";
 * import { backupController } from "./backup.ts";
 *
 * Deno.test("the Backup operator needs no more than its derived rules", async () => {
 *   await using cluster = await testCluster();
 *   await using account = await cluster.serviceAccount({
 *     rules: controllerRules([backupController]),
 *   });
 *   const manager = new Manager({
 *     client: account.client, metricsAddress: "0", healthAddress: "0", reportingInstance: "test",
 *   });
 *   manager.add(backupController);
 *   // ... run it, create a Backup with cluster.client, wait for what it should do, stop it ...
 *   account.assertNoDenials(); // fails with e.g. "- get persistentvolumeclaims (namespace test-1a2b3c4d)"
 * });
 * ```
 *
 * @module
 */
import { systemClock } from "../async/clock.ts";
import { type ClientOptions, KubeClient } from "../kube/client.ts";
import { loadConfig } from "../kube/config.ts";
import { isNotFound } from "../kube/errors.ts";
import { CLUSTER_ROLES, ROLES, SUBJECT_ACCESS_REVIEWS } from "../kube/resources.ts";
import type { KubeObject } from "../kube/types.ts";
import type { PolicyRule } from "../runtime/rbac/policy_rule.ts";
import type { OwnershipSpec } from "../runtime/rbac/ownership_policy.ts";
import { type Denial, DenialRecorder } from "./denials.ts";
import { accountObjects, accountUser, type RbacObject } from "./_account_objects.ts";

/** How long {@link testServiceAccount} waits for the API server to apply new bindings. */
const RBAC_EFFECTIVE_TIMEOUT_MS = 15_000;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Options of {@link testServiceAccount}. */
export interface ServiceAccountOptions {
  /**
   * Rules granted everywhere, through a ClusterRole and a
   * ClusterRoleBinding: e.g. `controllerRules(specs)`.
   */
  rules: readonly PolicyRule[];
  /**
   * Rules granted in one namespace each, through a Role and a RoleBinding
   * there: e.g. `{ default: leaderElectionRules("my-operator") }` for a
   * Lease in `default`. Each namespace must exist.
   *
   * @default {{}}
   */
  namespaced?: Readonly<Record<string, readonly PolicyRule[]>>;
  /**
   * The controller specs of the operator: the account is confined, as
   * deployed, by the ValidatingAdmissionPolicy `ownershipPolicy(specs)`
   * derives for it, which admits its writes under `rules` only to objects
   * they own (named `<test namespace>-<name>-owned-only`, with its binding).
   * A write it refuses is a 403 that names the policy, and a denial.
   *
   * @default {undefined} no policy: RBAC alone
   */
  policy?: readonly OwnershipSpec[];
  /**
   * The ServiceAccount's name, a DNS label; the roles and bindings are
   * named `<test namespace>-<name>`.
   *
   * @default {"operator"}
   */
  name?: string;
  /**
   * Lifetime asked for the token, in seconds; the API server's floor is 600.
   *
   * @default {3600}
   */
  expirationSeconds?: number;
  /**
   * Options of {@link TestServiceAccount.client}; an `onRequest` given here
   * is called after the account's own, which records denials.
   */
  clientOptions?: ClientOptions;
  /** Aborts the setup; what was created is deleted. */
  signal?: AbortSignal;
}

/** A ServiceAccount bound to given rules; dispose of it with `await using`, or call {@link delete}. */
export interface TestServiceAccount extends AsyncDisposable {
  /** The ServiceAccount's name. */
  readonly name: string;
  /** Its namespace: the test cluster's. */
  readonly namespace: string;
  /** The user RBAC sees: `system:serviceaccount:<namespace>:<name>`. */
  readonly username: string;
  /** Path of a kubeconfig authenticating as the account, for an operator run as a process. */
  readonly kubeconfig: string;
  /** A client authenticating as the account, whose default namespace is {@link namespace}. */
  readonly client: KubeClient;
  /** Every 403 {@link client} got so far, in order. */
  readonly denials: readonly Denial[];
  /**
   * Throws when {@link client} got a 403.
   *
   * @throws {Error} listing "verb resource (namespace)" of every denial.
   */
  assertNoDenials(): void;
  /**
   * Closes the client, deletes the kubeconfig, the ServiceAccount, its roles
   * and bindings (what is already gone is skipped). Idempotent.
   */
  delete(): Promise<void>;
}

/**
 * Creates a ServiceAccount in `cluster`'s namespace bound to exactly the
 * rules of `options`, waits until RBAC applies them, and returns it with a
 * token kubeconfig and a client; see the module documentation. `cluster` is
 * the admin side the account is made with: a `TestCluster` is one.
 *
 * @throws {RangeError} when `name` is not a DNS label of at most 63
 * characters, or `expirationSeconds` is below 600.
 * @throws {ApiError} when the admin client may not create the objects or
 * request the token.
 * @throws {Error} when the API server does not allow a rule to the account
 * within 15 s of its binding.
 * @throws the signal's reason when aborted.
 */
export async function testServiceAccount(
  cluster: { readonly client: KubeClient; readonly kubeconfig: string; readonly namespace: string },
  options: ServiceAccountOptions,
): Promise<TestServiceAccount> {
  const name = options.name ?? "operator";
  if (name.length > 63 || !DNS_LABEL.test(name)) {
    throw new RangeError(
      `Cannot create a test service account: 'name' must be a DNS label of at most 63 ` +
        `characters, got ${JSON.stringify(name)}`,
    );
  }
  const expirationSeconds = options.expirationSeconds ?? 3600;
  if (!(expirationSeconds >= 600)) {
    throw new RangeError(
      `Cannot create a test service account: 'expirationSeconds' must be at least 600, got ${expirationSeconds}`,
    );
  }
  const { client: admin, namespace } = cluster;
  const { signal } = options;
  const objects = accountObjects({
    namespace,
    name,
    rules: options.rules,
    namespaced: options.namespaced ?? {},
    ...(options.policy && { policy: options.policy }),
  });
  const created: RbacObject[] = [];
  const files: string[] = [];
  let client: KubeClient | undefined;
  // Deletes what it can, bindings before roles before the account, and throws the first failure.
  const teardown = async () => {
    client?.close();
    for (const file of files) await Deno.remove(file).catch(() => {});
    const failures: unknown[] = [];
    for (const object of created.toReversed()) {
      const { name, namespace } = object.body.metadata;
      await admin.delete(object.resource, name, namespace ? { namespace } : {}).catch((error) => {
        if (!isNotFound(error)) failures.push(error);
      });
    }
    if (failures.length > 0) throw failures[0];
  };
  try {
    for (const object of objects) {
      await admin.create(object.resource, object.body, signal ? { signal } : {});
      created.push(object);
    }
    await rbacEffective(admin, objects, accountUser(namespace, name), signal);
    const { token } = await admin.requestToken(namespace, name, {
      expirationSeconds,
      ...(signal && { signal }),
    });
    const path = await Deno.makeTempFile({
      prefix: "kinglet-test-account-",
      suffix: ".kubeconfig",
    });
    files.push(path);
    await Deno.writeTextFile(path, await tokenKubeconfig(cluster.kubeconfig, token, namespace), {
      mode: 0o600,
    });
    const recorder = new DenialRecorder();
    const theirs = options.clientOptions?.onRequest;
    client = new KubeClient(await loadConfig({ kubeconfig: path }), {
      ...options.clientOptions,
      onRequest: theirs
        ? (o) => {
          recorder.observe(o);
          theirs(o);
        }
        : recorder.observe,
    });
    return new Account({ name, namespace, kubeconfig: path, client, recorder }, teardown);
  } catch (error) {
    await teardown().catch(() => {});
    throw signal?.aborted ? signal.reason : error;
  }
}

class Account implements TestServiceAccount {
  readonly name: string;
  readonly namespace: string;
  readonly username: string;
  readonly kubeconfig: string;
  readonly client: KubeClient;
  readonly #recorder: DenialRecorder;
  readonly #teardown: () => Promise<void>;
  #deleting: Promise<void> | undefined;

  constructor(
    fields: Pick<TestServiceAccount, "name" | "namespace" | "kubeconfig" | "client"> & {
      recorder: DenialRecorder;
    },
    teardown: () => Promise<void>,
  ) {
    this.name = fields.name;
    this.namespace = fields.namespace;
    this.username = accountUser(fields.namespace, fields.name);
    this.kubeconfig = fields.kubeconfig;
    this.client = fields.client;
    this.#recorder = fields.recorder;
    this.#teardown = teardown;
  }

  get denials(): readonly Denial[] {
    return this.#recorder.denials;
  }

  assertNoDenials(): void {
    this.#recorder.assertNone(`ServiceAccount ${this.namespace}/${this.name}`);
  }

  delete(): Promise<void> {
    this.#deleting ??= this.#teardown();
    return this.#deleting;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.delete();
  }
}

/**
 * Waits until the API server allows the first rule of every role to `user`:
 * RBAC reads roles and bindings from its own watch cache, a moment behind
 * their creation.
 */
async function rbacEffective(
  admin: KubeClient,
  objects: readonly RbacObject[],
  user: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const deadline = performance.now() + RBAC_EFFECTIVE_TIMEOUT_MS;
  for (const { body, resource } of objects) {
    const rule = body.rules?.[0];
    if (!rule || (resource !== ROLES && resource !== CLUSTER_ROLES)) continue;
    const attributes = {
      verb: rule.verbs[0],
      group: rule.apiGroups[0],
      ...splitResource(rule.resources[0]!),
      ...(rule.resourceNames?.[0] !== undefined && { name: rule.resourceNames[0] }),
      ...(body.metadata.namespace !== undefined && { namespace: body.metadata.namespace }),
    };
    for (;;) {
      const review = await admin.create<KubeObject & { status?: { allowed?: boolean } }>(
        SUBJECT_ACCESS_REVIEWS,
        {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          metadata: {},
          spec: { user, resourceAttributes: attributes },
        } as KubeObject,
        signal ? { signal } : {},
      );
      if (review.status?.allowed) break;
      if (performance.now() > deadline) {
        throw new Error(
          `The API server still denies ${user} ${JSON.stringify(attributes)} ${
            RBAC_EFFECTIVE_TIMEOUT_MS / 1000
          } s after ${body.kind} ${body.metadata.name} granted it`,
        );
      }
      await systemClock.sleep(100, signal);
    }
  }
}

function splitResource(resource: string): { resource: string; subresource?: string } {
  const [plural, subresource] = resource.split("/", 2) as [string, string?];
  return subresource === undefined ? { resource: plural } : { resource: plural, subresource };
}

/** A kubeconfig (JSON, which is YAML) for the server of `adminKubeconfig`, authenticating with `token`. */
async function tokenKubeconfig(
  adminKubeconfig: string,
  token: string,
  namespace: string,
): Promise<string> {
  const admin = await loadConfig({ kubeconfig: adminKubeconfig });
  const cluster = {
    server: admin.server,
    ...(admin.caCert !== undefined && { "certificate-authority-data": btoa(admin.caCert) }),
    ...(admin.proxyUrl !== undefined && { "proxy-url": admin.proxyUrl }),
  };
  return JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "test", cluster }],
      users: [{ name: "account", user: { token } }],
      contexts: [{ name: "account", context: { cluster: "test", user: "account", namespace } }],
      "current-context": "account",
    },
    null,
    2,
  );
}
