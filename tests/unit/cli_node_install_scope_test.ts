/**
 * The credentials timer keeps the scope the user chose: kinglet-credentials.service
 * loads kinglet.service's environment file, so the one line `KINGLET_NAMESPACE=team-a`
 * that confines `kinglet run` also confines the rights `kinglet install` grants at
 * every renewal. The committed unit's command line runs (main.ts, as the unit would)
 * against an API server double that records what is applied.
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const SYSTEMD = new URL("../../deploy/systemd/", import.meta.url);
const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** The one `EnvironmentFile=` line of a unit. */
function environmentFile(unit: string): string {
  const lines = unit.split("\n").filter((line) => line.startsWith("EnvironmentFile="));
  assert.equal(lines.length, 1, `expected one EnvironmentFile= line, got ${lines.length}`);
  return lines[0]!;
}

/** The variables an environment file sets, as systemd reads it: `NAME=value` lines, `#` comments. */
function variables(text: string): Record<string, string> {
  const pairs = text.split("\n").filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]);
  return Object.fromEntries(pairs);
}

/** An object `kinglet install` applied: where, and its rules if it has any. */
interface Applied {
  path: string;
  rules?: { resources?: string[] }[];
}

/**
 * Runs the credentials unit's `ExecStart=` with `env` (what systemd would
 * give it from the environment file) against an API server double;
 * resolves to what it applied.
 */
async function runCredentialsUnit(env: Record<string, string>): Promise<Applied[]> {
  const unit = await Deno.readTextFile(new URL("kinglet-credentials.service", SYSTEMD));
  const exec = /^ExecStart=\/usr\/local\/bin\/kinglet (.*)$/m.exec(unit)?.[1];
  assert.ok(exec, "kinglet-credentials.service runs no kinglet");
  const applied: Applied[] = [];
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const { pathname } = new URL(req.url);
      if (req.method === "PATCH") {
        const object = JSON.parse(await req.text());
        applied.push({ path: pathname, ...(object.rules && { rules: object.rules }) });
        return Response.json(object);
      }
      if (req.method === "POST" && pathname.endsWith("/token")) {
        return Response.json({
          status: { token: "t", expirationTimestamp: "2030-01-01T00:00:00Z" },
        });
      }
      return Response.json({ status: { conditions: [{ type: "Established", status: "True" }] } });
    },
  );
  const dir = await Deno.makeTempDir({ prefix: "kinglet_scope_" });
  try {
    const admin = join(dir, "admin");
    await Deno.writeTextFile(
      admin,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "c", cluster: { server: `http://127.0.0.1:${server.addr.port}` } }],
        users: [{ name: "u", user: { token: "admin" } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    // %d is the unit's credentials directory, /var/lib/kinglet its state directory.
    const args = exec.replaceAll("%d", dir).replaceAll("/var/lib/kinglet", join(dir, "state"))
      .split(/\s+/);
    const inherited = Object.fromEntries(
      ["PATH", "HOME", "DENO_DIR"].flatMap((name) => {
        const value = Deno.env.get(name);
        return value === undefined ? [] : [[name, value]];
      }),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "--no-prompt", MAIN, ...args],
      env: { ...inherited, ...env },
      clearEnv: true,
      stdin: "null",
    }).output();
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    assert.equal(out.code, 0, `${decode(out.stdout)}\n${decode(out.stderr)}`);
    return applied;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const KINGLET_ROLES =
  /^\/apis\/rbac\.authorization\.k8s\.io\/v1\/namespaces\/([^/]+)\/roles\/kinglet$/;

/** The namespaces of the Roles `kinglet`, and whether the ClusterRole grants Secrets. */
function grants(applied: readonly Applied[]) {
  const clusterRole = applied.find((a) => a.path.endsWith("/clusterroles/kinglet"));
  assert.ok(clusterRole, "no ClusterRole kinglet was applied");
  return {
    roles: applied.flatMap((a) => KINGLET_ROLES.exec(a.path)?.[1] ?? []),
    bindings: applied.flatMap((a) =>
      /\/namespaces\/([^/]+)\/rolebindings\/kinglet$/.exec(a.path)?.[1] ?? []
    ),
    clusterSecrets: clusterRole.rules!.some((rule) => rule.resources?.includes("secrets")),
  };
}

Deno.test("the credentials unit loads kinglet.service's environment file", async () => {
  const [service, credentials] = await Promise.all(
    ["kinglet.service", "kinglet-credentials.service"].map((file) =>
      Deno.readTextFile(new URL(file, SYSTEMD))
    ),
  );
  assert.equal(environmentFile(credentials!), environmentFile(service!));
  assert.equal(environmentFile(service!), "EnvironmentFile=-/etc/kinglet/kinglet.env");
});

Deno.test("KINGLET_NAMESPACE in kinglet.env confines the rights the credentials unit grants to that namespace", async () => {
  const env = await Deno.readTextFile(new URL("kinglet.env", SYSTEMD));
  assert.match(env, /^#KINGLET_NAMESPACE=$/m, "kinglet.env shows no KINGLET_NAMESPACE line");
  const wide = grants(await runCredentialsUnit(variables(env)));
  assert.deepEqual(wide, { roles: [], bindings: [], clusterSecrets: true });

  // The one line a user uncomments to scope node mode, read by run and install alike.
  const scoped = env.replace(/^#KINGLET_NAMESPACE=$/m, "KINGLET_NAMESPACE=team-a");
  assert.deepEqual(grants(await runCredentialsUnit(variables(scoped))), {
    roles: ["team-a"],
    bindings: ["team-a"],
    clusterSecrets: false,
  });
});
