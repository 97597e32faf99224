/**
 * kinglet's systemd units as systemd would start them, without systemd: the
 * `ExecStart=` of a committed unit under `deno run main.ts`, with the unit's
 * `Environment=` lines overridden by an environment file's (systemd's
 * order), the credentials directory (`%d`) and the state directory
 * (`/var/lib/kinglet`) in a temporary folder, and an API server double that
 * answers install and records what it applies.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";

/** deploy/systemd/, where the committed units are. */
export const SYSTEMD = new URL("../../deploy/systemd/", import.meta.url);
const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** The variables an environment file sets, as systemd reads it: `NAME=value` lines, `#` comments. */
export function envVariables(text: string): Record<string, string> {
  const pairs = text.split("\n").filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]);
  return Object.fromEntries(pairs);
}

/** The variables a unit's own `Environment=` lines set. */
export function unitEnvironment(unit: string): Record<string, string> {
  return envVariables(
    unit.split("\n").filter((line) => line.startsWith("Environment="))
      .map((line) => line.slice("Environment=".length)).join("\n"),
  );
}

/** An object `kinglet install` applied: where, and its rules if it has any. */
export interface Applied {
  path: string;
  rules?: { resources?: string[] }[];
}

/** How a unit's command ended, and what it applied. */
export interface UnitRun {
  code: number;
  stdout: string;
  stderr: string;
  applied: Applied[];
}

/** An API server double that answers install, and what it was asked. */
export interface InstallServer extends AsyncDisposable {
  /** Its address, `http://127.0.0.1:<port>`. */
  url: string;
  /** The objects applied (server-side apply), in order. */
  applied: Applied[];
  /** Every request, as `METHOD path`. */
  requests: string[];
}

/**
 * Starts an API server double that answers install: applies succeed, CRDs
 * are Established, a token request gets a token.
 */
export function installServer(): InstallServer {
  const applied: Applied[] = [];
  const requests: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const { pathname } = new URL(req.url);
      requests.push(`${req.method} ${pathname}`);
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
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    applied,
    requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** Writes at `path` an admin kubeconfig (a bearer token) for the API server at `url`. */
export function writeAdminKubeconfig(path: string, url: string): Promise<void> {
  return Deno.writeTextFile(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: url } }],
      users: [{ name: "u", user: { token: "admin" } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    }),
  );
}

/**
 * Runs the `ExecStart=` of `deploy/systemd/<file>` with the unit's own
 * variables under `envFile`'s (what systemd gives it from the environment
 * file); the admin kubeconfig (`%d/admin`) points at an {@link installServer}.
 * `kinglet run` finds no kubeconfig in the empty state directory: it exits 1
 * once its configuration is read.
 */
export async function runUnit(file: string, envFile: Record<string, string>): Promise<UnitRun> {
  const unit = await Deno.readTextFile(new URL(file, SYSTEMD));
  const exec = /^ExecStart=\/usr\/local\/bin\/kinglet (.*)$/m.exec(unit)?.[1];
  assert.ok(exec, `${file} runs no kinglet`);
  await using server = installServer();
  const dir = await Deno.makeTempDir({ prefix: "kinglet_unit_" });
  try {
    await writeAdminKubeconfig(join(dir, "admin"), server.url);
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
      env: { ...inherited, ...unitEnvironment(unit), ...envFile },
      clearEnv: true,
      stdin: "null",
    }).output();
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    return {
      code: out.code,
      stdout: decode(out.stdout),
      stderr: decode(out.stderr),
      applied: server.applied,
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
