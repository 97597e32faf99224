/**
 * A kubeconfig whose user authenticates with an exec credential plugin that
 * writes down the names of the environment variables it was started with:
 * how the tests show what a plugin sees of kinglet's environment.
 *
 * @module
 */
import { join } from "node:path";

/** The kubeconfig, its plugin, and what the plugin saw on its last run. */
export interface EnvPlugin {
  /** The kubeconfig file. */
  kubeconfig: string;
  /** The plugin, an executable shell script beside the kubeconfig. */
  command: string;
  /** Sorted names of the variables of the plugin's last run, without the PWD the shell adds. */
  names(): Promise<string[]>;
}

/**
 * Writes `config` and `plugin.sh` into `dir`. The plugin's exec section sets
 * `PLUGIN_MODE`; the plugin prints a credential whose token is `tok`, or,
 * with `fail`, exits 1 after writing the names (so a command that needs no
 * server stops there).
 */
export async function envPlugin(dir: string, options: { fail?: boolean } = {}): Promise<EnvPlugin> {
  const command = join(dir, "plugin.sh");
  const namesFile = join(dir, "names");
  const credential = JSON.stringify({
    apiVersion: "client.authentication.k8s.io/v1",
    kind: "ExecCredential",
    status: { token: "tok" },
  });
  await Deno.writeTextFile(
    command,
    [
      "#!/bin/sh",
      // dash exports PWD of its own accord; every other name came from the parent.
      `env | sed -n 's/^\\([A-Za-z_][A-Za-z0-9_]*\\)=.*/\\1/p' | grep -vx PWD | sort > '${namesFile}'`,
      options.fail ? "echo 'refused on purpose' >&2; exit 1" : `echo '${credential}'`,
      "",
    ].join("\n"),
  );
  await Deno.chmod(command, 0o755);
  const kubeconfig = join(dir, "config");
  await Deno.writeTextFile(
    kubeconfig,
    JSON.stringify({
      "current-context": "c",
      clusters: [{ name: "k", cluster: { server: "https://127.0.0.1:1" } }],
      users: [{
        name: "u",
        user: {
          exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: "./plugin.sh",
            env: [{ name: "PLUGIN_MODE", value: "edge" }],
            interactiveMode: "Never",
          },
        },
      }],
      contexts: [{ name: "c", context: { cluster: "k", user: "u" } }],
    }),
  );
  return {
    kubeconfig,
    command,
    names: async () => (await Deno.readTextFile(namesFile)).split("\n").filter(Boolean),
  };
}
