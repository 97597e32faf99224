// deno-lint-ignore-file no-console -- the CLI's output is its interface
/**
 * kinglet's command line: `run` (the default), `install`, `uninstall`,
 * `crds`, `debug cache`, `init`, `version`. Exit codes: 0 done, 1 failed, 2 a
 * configuration error (a bad flag or variable, a run wider than its
 * credentials): what a restart cannot fix, which the units do not restart on.
 *
 * Only `run` and what it needs are imported up front: the other commands load
 * their code (the zod schemas, the YAML printer) when they run, so that the
 * operator's resident memory does not pay for them.
 *
 * @module
 */
import {
  envName,
  type FlagSpec,
  formatHelp,
  parseDuration,
  parseFlags,
  UsageError,
} from "./lib/cli/flags.ts";
import { failure } from "./lib/cli/operator_flags.ts";
import { KINGLET } from "./lib/cli/permissions.ts";
import { runOperator } from "./lib/cli/run.ts";
import { CONNECTION_FLAGS, RUN_FLAGS, runOptions } from "./lib/cli/run_flags.ts";
import { suggest } from "./lib/cli/suggest.ts";
import { VERSION } from "./lib/cli/version.ts";
import { KubeClient } from "./lib/kube/client.ts";
import { loadConfig, readEnv } from "./lib/kube/config.ts";
import { isForbidden } from "./lib/kube/errors.ts";
import { type LogFormat, logger, type LogLevel, setupLogging } from "./lib/log.ts";

const USAGE =
  `kinglet ${VERSION}: a lean Kubernetes operator for WebApp, DatabaseCluster and InferenceService.

Usage:
  kinglet [run] [flags]          run the operator
  kinglet install [flags]        server-side apply the CRDs and wait until Established
  kinglet uninstall [flags]      delete what install created (refuses while resources exist)
  kinglet crds                   print the CRDs as YAML
  kinglet debug cache [flags]    print what a running kinglet caches, from its /debug/cache
  kinglet init <dir> [flags]     write a new operator project on kinglet (--group, --kind)
  kinglet version                print the version

Run 'kinglet <command> --help' for the flags of a command.`;

const COMMANDS = ["run", "install", "uninstall", "crds", "debug", "init", "version", "help"];

const INSTALL_FLAGS = [
  ...CONNECTION_FLAGS,
  {
    name: "leader-election-namespace",
    type: "string" as const,
    default: "kinglet-system",
    help: "Namespace to create for the leader Lease; empty creates none.",
  },
  {
    name: "node-kubeconfig",
    type: "string" as const,
    default: "",
    help:
      "Also apply kinglet's ServiceAccount and RBAC and write a kubeconfig here (its token at <path>.token, both 0600) with which node mode runs under them instead of the admin kubeconfig; again to renew the token.",
  },
  {
    name: "namespace",
    type: "string" as const,
    default: "",
    help:
      "With --node-kubeconfig: grant kinglet's rights in this namespace only (a Role there), for a kinglet run with the same --namespace; empty grants them in every namespace.",
  },
  {
    name: "token-lifetime",
    type: "duration" as const,
    default: "24h",
    help: "How long the token of --node-kubeconfig is valid (the API server may shorten it).",
  },
];

const UNINSTALL_FLAGS = [
  ...CONNECTION_FLAGS,
  {
    name: "leader-election-namespace",
    type: "string" as const,
    default: "kinglet-system",
    help: "Namespace to delete if install created it and no pod runs in it; empty deletes none.",
  },
  {
    name: "force",
    type: "boolean" as const,
    default: "false",
    help: "Uninstall even while custom resources exist: deletes them and their workloads too.",
  },
];

async function main(args: string[]): Promise<number> {
  const [first, ...rest] = args;
  const command = first && !first.startsWith("-") ? first : "run";
  const commandArgs = command === first ? rest : args;
  if (
    first === "help" || (command === "run" && first !== "run" && /^(-h|--help)$/.test(first ?? ""))
  ) {
    console.log(formatHelp(USAGE, RUN_FLAGS, "Flags of kinglet run:"));
    return 0;
  }
  switch (command) {
    case "version":
      console.log(VERSION);
      return 0;
    case "crds":
      if (commandArgs.includes("--help") || commandArgs.includes("-h")) {
        console.log(
          "kinglet crds: print the CRDs as YAML (pipe to kubectl apply --server-side -f -)",
        );
        return 0;
      }
      if (commandArgs.length) {
        throw new UsageError(`kinglet crds takes no arguments, got ${commandArgs.join(" ")}`);
      }
      // install.ts loads zod and yaml: only the commands that need them pay for them.
      console.log((await import("./lib/cli/install.ts")).crdsYaml());
      return 0;
    case "install": {
      // The credentials unit reads the operator's environment file: a setting it shares with
      // run, refused there, must not stop the token's renewal.
      const flags = parseFlags(INSTALL_FLAGS, commandArgs, flagEnv(INSTALL_FLAGS), {
        lenient: RUN_FLAGS.map((spec) => spec.name),
      });
      if (flags.help) return help("kinglet install [flags]", INSTALL_FLAGS);
      logging(flags.values);
      for (const warning of flags.warnings) logger("main").warn(warning);
      const config = await loadConfig(connection(flags.values));
      const { install } = await import("./lib/cli/install.ts");
      const node = flags.values["node-kubeconfig"]
        ? await import("./lib/cli/node_credentials.ts")
        : undefined;
      // Before anything is applied: the RBAC is no use without the files.
      await node?.checkNodeFiles(flags.values["node-kubeconfig"]!);
      const client = new KubeClient(config);
      try {
        const names = await install(client, {
          ...(flags.values["leader-election-namespace"] &&
            { namespace: flags.values["leader-election-namespace"] }),
        });
        console.log(`installed and Established: ${names.join(", ")}`);
        const nodeKubeconfig = flags.values["node-kubeconfig"];
        if (node && nodeKubeconfig) {
          const { installNodeCredentials } = node;
          const lifetime = parseDuration(flags.values["token-lifetime"] ?? "24h") ?? 86_400_000;
          const done = await installNodeCredentials(client, config, {
            path: nodeKubeconfig,
            namespace: flags.values["leader-election-namespace"] || "kinglet-system",
            ...(flags.values.namespace && { watchNamespace: flags.values.namespace }),
            expirationSeconds: Math.round(lifetime / 1000),
          });
          for (const line of done) console.log(line);
        }
      } catch (error) {
        if (!isForbidden(error)) throw error;
        const { installDenied } = await import("./lib/cli/node_credentials.ts");
        const namespace = flags.values["leader-election-namespace"] || undefined;
        throw installDenied(error as Error, config.source, namespace);
      } finally {
        client.close();
      }
      return 0;
    }
    case "uninstall": {
      const flags = parseFlags(UNINSTALL_FLAGS, commandArgs, flagEnv(UNINSTALL_FLAGS));
      if (flags.help) return help("kinglet uninstall [flags]", UNINSTALL_FLAGS);
      logging(flags.values);
      const { uninstall } = await import("./lib/cli/uninstall.ts");
      const client = new KubeClient(await loadConfig(connection(flags.values)));
      try {
        const done = await uninstall(client, {
          ...(flags.values["leader-election-namespace"] &&
            { namespace: flags.values["leader-election-namespace"] }),
          force: flags.values.force === "true",
        });
        for (const line of done) console.log(line);
      } finally {
        client.close();
      }
      return 0;
    }
    case "debug": {
      const { debugCommand } = await import("./lib/cli/debug_cache.ts");
      return await debugCommand(commandArgs);
    }
    case "init": {
      const { initCommand } = await import("./lib/cli/init/command.ts");
      return await initCommand(commandArgs);
    }
    case "run": {
      if (commandArgs.includes("--version")) {
        console.log(VERSION);
        return 0;
      }
      const flags = parseFlags(RUN_FLAGS, commandArgs, flagEnv(RUN_FLAGS));
      if (flags.help) return help("kinglet run [flags]", RUN_FLAGS);
      if (flags.positionals.length) {
        throw new UsageError(`unexpected argument ${flags.positionals[0]}`);
      }
      const options = runOptions(flags.values, flags);
      logging(flags.values);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      for (const s of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(s, onSignal);
      try {
        return await runOperator(options, stop.signal);
      } finally {
        for (const s of ["SIGTERM", "SIGINT"] as const) Deno.removeSignalListener(s, onSignal);
      }
    }
    default: {
      const near = suggest(command, COMMANDS);
      throw new UsageError(`unknown command "${command}"${near ? ` (did you mean ${near}?)` : ""}`);
    }
  }
}

/** The kubeconfig and context the flags name. */
function connection(values: Record<string, string | undefined>) {
  return {
    ...(values.kubeconfig && { kubeconfig: values.kubeconfig }),
    ...(values.context && { context: values.context }),
  };
}

/** The `KINGLET_*` variables of `specs`, read one by one (no blanket env permission needed). */
function flagEnv(specs: readonly FlagSpec[]): Record<string, string | undefined> {
  return readEnv(specs.map((s) => envName(s.name)));
}

function help(usage: string, specs: Parameters<typeof formatHelp>[1]): number {
  console.log(formatHelp(usage, specs));
  return 0;
}

function logging(values: Record<string, string | undefined>): void {
  setupLogging({
    ...(values["log-format"] && { format: values["log-format"] as LogFormat }),
    level: (values["log-level"] ?? "info") as LogLevel,
  });
}

if (import.meta.main) {
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    logger("main").error("unhandled rejection: {error}", { error: String(event.reason) });
  });
  let code: number;
  try {
    code = await main(Deno.args);
  } catch (error) {
    code = report(error);
  }
  Deno.exit(code);
}

function report(error: unknown): number {
  const { code, message } = failure(KINGLET, error);
  console.error(message);
  return code;
}
