/**
 * Node mode under systemd, no DaemonSet: the operator's unit (sandboxed, a
 * dynamic user, its memory limit beside `MemoryMax=`, `--leader-elect` so
 * that one node of many reconciles), its environment file, and the
 * credentials service and timer that give it a kubeconfig of its own
 * ServiceAccount instead of the k3s admin file, renewed every 8 hours.
 *
 * The credentials service runs the operator's own `install --kubeconfig
 * <admin> --node-kubeconfig <path>` (`kinglet install` for kinglet,
 * `runNodeInstall` in an author's main.ts), which applies the RBAC of
 * deploy/ and writes the kubeconfig the unit reads. It loads the unit's
 * environment file too, so that a setting both commands read (kinglet's
 * `KINGLET_NAMESPACE`) scopes the rights as it scopes the run, at every
 * renewal.
 *
 * @example
 * ```ts
 * import { unitFile } from "./node_files.ts";
 * import { describeOperator } from "./operator.ts";
 * import { CONFIG_MAPS } from "../kube/mod.ts";
 * const operator = describeOperator({
 *   name: "mirror-operator",
 *   envPrefix: "MIRROR_",
 *   image: "ghcr.io/example/mirror-operator:0.1.0",
 *   controllers: [{ name: "mirror", resource: CONFIG_MAPS }],
 * });
 * unitFile(operator).includes("ExecStart=/usr/local/bin/mirror-operator --leader-elect"); // true
 * ```
 *
 * @module
 */
import { comment, wrap } from "./_comment.ts";
import { memoryLimitVariable } from "./cluster_files.ts";
import { type EnvGroup, type Operator, systemdMemory } from "./operator.ts";
import { RUNTIME_ENV } from "../build/mod.ts";
import { MEMORY_LIMIT_FORMS } from "../runtime/memory/mod.ts";
import { webhooksYaml } from "./webhook_files.ts";

/** The hardening both services share, after their `UMask=`-free head. */
function sandbox(): string {
  return `NoNewPrivileges=yes
CapabilityBoundingSet=
AmbientCapabilities=
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
SystemCallArchitectures=native
UMask=0077
# System calls are denied by group, the groups nothing in Deno or V8 uses. An
# allow list (@system-service) is not set: it lacks calls V8 may make, such as
# pkey_mprotect. Nor is MemoryDenyWriteExecute=yes: V8 compiles JavaScript
# into executable memory.
SystemCallFilter=~@clock @cpu-emulation @debug @module @mount @obsolete @raw-io @reboot @swap
SystemCallErrorNumber=EPERM
`;
}

/** The file names of the node's units, by what they are. */
export function unitNames(operator: Pick<Operator, "name">): {
  service: string;
  env: string;
  credentials: string;
  timer: string;
} {
  const { name } = operator;
  return {
    service: `${name}.service`,
    env: `${name}.env`,
    credentials: `${name}-credentials.service`,
    timer: `${name}-credentials.timer`,
  };
}

/** The kubeconfig the credentials service writes and the operator reads. */
export function nodeKubeconfigPath(operator: Pick<Operator, "name">): string {
  return `/var/lib/${operator.name}/kubeconfig`;
}

/** `<name>.service`: the operator in node mode. */
export function unitFile(operator: Operator): string {
  const { name, notes } = operator;
  const units = unitNames(operator);
  const kubeconfig = nodeKubeconfigPath(operator);
  const flag = operator.kubeconfigFlag;
  const args = [
    ...operator.command,
    ...(flag ? [flag, kubeconfig] : []),
    "--leader-elect",
  ];
  const kubeconfigEnv = flag ? "" : `Environment=KUBECONFIG=${kubeconfig}\n`;
  const running = [name, ...operator.command].join(" ");
  const memory = `${name}'s ${notes.memoryLimitReader ?? memoryLimitVariable(operator)}`;
  return `${
    comment(
      `${name} in node mode: on each k3s server node, copy the binary to /usr/local/bin/${name}, ` +
        `this file, ${units.credentials} and ${units.timer} to /etc/systemd/system/ and ` +
        `${units.env} to /etc/${name}/, then:`,
    )
  }#   systemctl enable --now ${units.timer} ${name}
# The binary (${notes.buildTask ?? "deno task build"}) is compiled from the bundle of main.ts with
# its permissions, V8 flags and --no-code-cache baked in: \`${running}\` writes
# nothing, which ProtectSystem=strict below relies on.
# Every node runs a candidate; the leader Lease lets exactly one reconcile.
[Unit]
Description=${name} Kubernetes operator (node mode)
Documentation=man:systemd.exec(5)
${
    comment(
      `Its kubeconfig and token, with ${name}'s own rights, come from ${units.credentials}.`,
      "",
      100,
    )
  }After=network-online.target k3s.service ${units.credentials}
Wants=network-online.target ${units.credentials}

[Service]
Type=exec
${
    comment(
      `Not the k3s admin kubeconfig: ${units.credentials} writes a kubeconfig of ${name}'s ` +
        "own ServiceAccount, bound to deploy/'s RBAC, into the state directory this unit " +
        `shares with it (the dynamic user "${name}", mode 0700), and renews its token there ` +
        `every 8 hours; ${name} reads the token file again every minute, so a renewed token ` +
        "needs no restart.",
    )
  }ExecStart=/usr/local/bin/${name} ${args.join(" ")}
${kubeconfigEnv}# Trust only the k3s CA from the kubeconfig, as client-go does, and load no
# bundled root store (3 to 4 MiB of memory); ${units.env} may override it.
Environment=DENO_TLS_CA_STORE=${RUNTIME_ENV.DENO_TLS_CA_STORE}
EnvironmentFile=-/etc/${name}/${units.env}
# glibc returns the buffers of large objects when freed${
    notes.environment ? ` (${notes.environment})` : ""
  }.
Environment=MALLOC_MMAP_THRESHOLD_=${RUNTIME_ENV.MALLOC_MMAP_THRESHOLD_}
Restart=on-failure
RestartSec=5s
# 2 is a configuration error (a flag, or a variable of ${units.env}): a restart
# cannot fix it, so the unit stops until it is fixed.
RestartPreventExitStatus=2
# Longer than ${
    notes.shutdown ?? "the Manager's drain (10s)"
  }: SIGTERM drains reconciles and releases the Lease.
TimeoutStopSec=30s
StandardOutput=journal
StandardError=journal
SyslogIdentifier=${name}

# Sandbox: ${name} reads its kubeconfig, talks to the API server and serves
# /metrics and the probes on loopback; it writes nothing and needs no privilege.
DynamicUser=yes
User=${name}
StateDirectory=${name}
StateDirectoryMode=0700
ReadOnlyPaths=/var/lib/${name}
${sandbox()}
${
    comment(
      `The same budget as the in-cluster Deployment (${operator.layout.deploy}/deployment.yaml), ` +
        `and ${memory} kept in step with it (systemd's M is a mebibyte): ${name} reads no ` +
        "cgroup of a unit, and degrades before the kernel kills it.",
    )
  }MemoryMax=${systemdMemory(operator.memoryLimit)}
Environment=${memoryLimitVariable(operator)}=${operator.memoryLimit}

[Install]
WantedBy=multi-user.target
`;
}

/** `<name>.env`: the settings of the unit, commented out with their defaults. */
export function envFile(operator: Operator): string {
  const { name } = operator;
  const units = unitNames(operator);
  const header = operator.notes.envHeader ??
    wrap(
      `Settings of ${units.service}, read from /etc/${name}/${units.env}: one VARIABLE=value ` +
        "a line; the unit's own Environment= lines are read first.",
    );
  const memory: EnvGroup = {
    comment: [
      `Resident memory to stay under (${MEMORY_LIMIT_FORMS}).`,
      `${units.service} sets ${operator.memoryLimit}, beside its MemoryMax=${
        systemdMemory(operator.memoryLimit)
      }; change both together.`,
    ],
    lines: [`#${memoryLimitVariable(operator)}=${operator.memoryLimit}`],
  };
  const groups = operator.settings.map((group) => group === "memory-limit" ? memory : group);
  return [
    header.map((line) => `# ${line}\n`).join(""),
    ...groups.map((group) =>
      group.comment.map((line) => `# ${line}\n`).join("") +
      group.lines.map((line) => `${line}\n`).join("")
    ),
  ].join("\n");
}

/**
 * `<name>-credentials.service`: applies the operator's ServiceAccount and
 * RBAC with the k3s admin kubeconfig and writes a kubeconfig and a token of
 * that ServiceAccount for the operator's unit, with the settings of the
 * unit's environment file.
 */
export function credentialsService(operator: Operator): string {
  const { name } = operator;
  const units = unitNames(operator);
  const kubeconfig = nodeKubeconfigPath(operator);
  const install =
    `/usr/local/bin/${name} install --kubeconfig %d/admin --node-kubeconfig ${kubeconfig}`;
  const applies = `${name}'s own credentials for node mode: applies ${name}'s ServiceAccount and ` +
    "RBAC (deploy/'s) with the k3s admin kubeconfig";
  return `${
    comment(
      `${applies} and writes a kubeconfig and a token of that ServiceAccount (24 h) into ` +
        `/var/lib/${name}, the state directory it shares with ${units.service}. ` +
        `${units.timer} runs it again every 8 hours, well before the token expires; ${name} ` +
        "picks the new token up within a minute, without a restart.",
    )
  }[Unit]
Description=${name} credentials for node mode (ServiceAccount, RBAC, token)
After=network-online.target k3s.service
Wants=network-online.target

[Service]
Type=oneshot
# k3s.yaml is root's, mode 0600: systemd copies it into this unit's private
# credentials directory (%d) for the dynamic user, rather than ${name} running
# as root or the file being opened up. ${name} itself never sees it.
LoadCredential=admin:/etc/rancher/k3s/k3s.yaml
ExecStart=${install}
Environment=DENO_TLS_CA_STORE=${RUNTIME_ENV.DENO_TLS_CA_STORE}
${
    comment(
      `The settings ${units.service} reads: a flag install shares with run (the namespace ` +
        `${name} is confined to, say) takes the same value in both, so each renewal grants ` +
        `what ${units.service} runs with, no more.`,
    )
  }EnvironmentFile=-/etc/${name}/${units.env}
Environment=MALLOC_MMAP_THRESHOLD_=${RUNTIME_ENV.MALLOC_MMAP_THRESHOLD_}
StandardOutput=journal
StandardError=journal
SyslogIdentifier=${name}-credentials

DynamicUser=yes
User=${name}
StateDirectory=${name}
StateDirectoryMode=0700
${sandbox()}`;
}

/** `<name>-credentials.timer`: renews the token every 8 hours, a third of its lifetime. */
export function credentialsTimer(operator: Operator): string {
  const { name } = operator;
  return `${
    comment(
      `Renews ${name}'s node-mode token (${unitNames(operator).credentials}) every 8 hours, a ` +
        "third of its 24 h lifetime, and once a minute after boot.",
    )
  }[Unit]
Description=Renew ${name}'s node-mode token

[Timer]
OnBootSec=1min
OnUnitActiveSec=8h
RandomizedDelaySec=5min
Persistent=yes

[Install]
WantedBy=timers.target
`;
}

/**
 * The node's files by their name in deploy/systemd/; with admission
 * webhooks, `webhooks.yaml`, their configurations at the node's loopback,
 * which the credentials service applies.
 */
export function nodeFiles(operator: Operator): Map<string, string> {
  const units = unitNames(operator);
  const webhooks = webhooksYaml(operator, "url");
  return new Map([
    [units.service, unitFile(operator)],
    [units.env, envFile(operator)],
    [units.credentials, credentialsService(operator)],
    [units.timer, credentialsTimer(operator)],
    ...(webhooks === undefined ? [] : [["webhooks.yaml", webhooks] as [string, string]]),
  ]);
}
