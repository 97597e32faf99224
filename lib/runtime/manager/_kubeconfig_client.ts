/**
 * The client of a manager given none: a `KubeClient` for the cluster that
 * `loadConfig` finds, as controller-runtime's `GetConfigOrDie` (the
 * kubeconfig and context of `--kubeconfig` and `--context` when given, else
 * `KUBECONFIG`, the in-cluster service account, `~/.kube/config`).
 *
 * It exists before the configuration is read, because the manager hands its
 * client to caches and controllers when they are created; `Manager.run`
 * connects it before anything else (so a missing or broken kubeconfig fails
 * the run at once, with the `ConfigError` that says why) and closes it when
 * the run ends. Its requests are counted and timed by the hooks it is made
 * with, the manager's `rest_client_*` metrics, as `kinglet run`'s are.
 *
 * @module
 */
import { type ClientOptions, KubeClient } from "../../kube/client.ts";
import { loadConfig, type LoadConfigOptions } from "../../kube/config.ts";
import type { ManagerClient } from "./options.ts";

/** A `KubeClient` created by {@link KubeconfigClient.connect}; every call before it throws. */
export class KubeconfigClient implements ManagerClient {
  #client: KubeClient | undefined;
  readonly #connection: Pick<LoadConfigOptions, "kubeconfig" | "context">;
  readonly #observers: Pick<ClientOptions, "onRequest" | "onRateLimited">;

  /**
   * A client of the cluster that `connection` (a kubeconfig path, a context)
   * names; `observers` see every request of the client, once connected.
   */
  constructor(
    connection: Pick<LoadConfigOptions, "kubeconfig" | "context"> = {},
    observers: Pick<ClientOptions, "onRequest" | "onRateLimited"> = {},
  ) {
    this.#connection = connection;
    this.#observers = observers;
  }

  /** The API server's URL, once connected. */
  get server(): string | undefined {
    return this.#client?.server;
  }

  /**
   * Loads the configuration and creates the client; idempotent.
   *
   * @throws {ConfigError} when no usable configuration is found.
   */
  async connect(): Promise<void> {
    this.#client ??= new KubeClient(await loadConfig(this.#connection), this.#observers);
  }

  /** Closes the client's connections; a later {@link KubeconfigClient.connect} opens new ones. */
  close(): void {
    this.#client?.close();
    this.#client = undefined;
  }

  get: KubeClient["get"] = (resource, name, options) =>
    this.#connected().get(resource, name, options);
  list: KubeClient["list"] = (resource, options) => this.#connected().list(resource, options);
  watch: KubeClient["watch"] = (resource, options) => this.#connected().watch(resource, options);
  create: KubeClient["create"] = (resource, object, options) =>
    this.#connected().create(resource, object, options);
  apply: KubeClient["apply"] = (resource, object, options) =>
    this.#connected().apply(resource, object, options);
  patch: KubeClient["patch"] = (resource, name, patch, options) =>
    this.#connected().patch(resource, name, patch, options);
  replace: KubeClient["replace"] = (resource, object, options) =>
    this.#connected().replace(resource, object, options);
  delete: KubeClient["delete"] = (resource, name, options) =>
    this.#connected().delete(resource, name, options);
  resetConnections = (): void => this.#client?.resetConnections();

  #connected(): KubeClient {
    if (!this.#client) {
      throw new TypeError(
        "Cannot use the manager's client before Manager.run has loaded the kubeconfig",
      );
    }
    return this.#client;
  }
}
