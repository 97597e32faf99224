/**
 * `install --node-kubeconfig` proves it can write the kubeconfig and its
 * token before it applies anything: a path outside kinglet's write grant
 * (what `deno task start install` as the guides spell it met) or a folder
 * that cannot be made fails at once, exit 2, with what to grant, and the
 * API server sees no request.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type CredentialsClient,
  installNodeCredentials,
  NodeFilesError,
  nodeGrant,
} from "../../lib/deploy/node_credentials.ts";
import { installServer, writeAdminKubeconfig } from "../_support/node_units.ts";
import { SAMPLE } from "../_support/operator_description.ts";
import { runToExit } from "../reliability/_kinglet_cli.ts";

Deno.test("install with a node kubeconfig outside kinglet's write grant applies nothing, exits 2 and says what to grant", async () => {
  await using server = installServer();
  const dir = await Deno.makeTempDir({ prefix: "kinglet_install_files_" });
  try {
    const admin = join(dir, "admin");
    await writeAdminKubeconfig(admin, server.url);
    const folder = join(dir, "node");
    const args = [
      "install",
      "--kubeconfig",
      admin,
      "--node-kubeconfig",
      join(folder, "kubeconfig"),
    ];
    const refused = await runToExit(args, { env: { KINGLET_ALLOW_READ: dir } });
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(
      refused.stderr.trim(),
      `kinglet: Cannot write ${folder}/kubeconfig and ${folder}/kubeconfig.token: kinglet may ` +
        `not write in ${folder} (nothing was applied). Write them under /var/lib/kinglet, which ` +
        `it may, or start it with KINGLET_ALLOW_WRITE=${folder} (deno task start), or with ` +
        `--allow-write=${folder} (deno run)`,
    );
    assert.deepEqual(server.requests, []);

    const granted = await runToExit(args, {
      env: { KINGLET_ALLOW_READ: dir, KINGLET_ALLOW_WRITE: folder },
    });
    assert.equal(granted.code, 0, granted.stderr);
    assert.ok(server.applied.length > 0);
    assert.equal((await Deno.stat(join(folder, "kubeconfig.token"))).mode! & 0o777, 0o600);
    assert.deepEqual(
      [...Deno.readDirSync(folder)].map((entry) => entry.name).sort(),
      ["kubeconfig", "kubeconfig.token"],
      "the check left a file behind",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an operator's install refuses a folder it cannot make before it applies anything", async () => {
  const applied: string[] = [];
  const client: CredentialsClient = {
    apply: (resource, object) => {
      applied.push(`${resource.plural}/${object.metadata?.name}`);
      return Promise.resolve(object as never);
    },
    requestToken: () =>
      Promise.resolve({ token: "t", expirationTimestamp: "2030-01-01T00:00:00Z" }),
  };
  const dir = await Deno.makeTempDir({ prefix: "kinglet_install_files_" });
  try {
    const file = join(dir, "a-file");
    await Deno.writeTextFile(file, "");
    await assert.rejects(
      installNodeCredentials(client, { server: "https://x" }, nodeGrant(SAMPLE), {
        path: join(file, "kubeconfig"),
      }),
      (error: unknown) => {
        assert.ok(error instanceof NodeFilesError, String(error));
        assert.equal(error.exitCode, 2);
        assert.match(
          error.message,
          new RegExp(
            `^Cannot write ${file}/kubeconfig and .* in ${file} \\(nothing was applied\\)`,
          ),
        );
        return true;
      },
    );
    assert.deepEqual(applied, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
