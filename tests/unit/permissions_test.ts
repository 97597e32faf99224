/**
 * explainPermissionError against real denials: each test runs
 * tests/fixtures/permission_probe.ts in a `deno run` with chosen permissions
 * and checks what the explanation tells the user to do.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { explainPermissionError } from "../../lib/cli/permissions.ts";

const PROBE = fileURLToPath(new URL("../fixtures/permission_probe.ts", import.meta.url));

interface ProbeResult {
  ok?: true;
  value?: unknown;
  explanation?: string | null;
  error?: string;
}

async function probe(
  permissions: string[],
  operation: string,
  argument = "",
  wrapper: string[] = [],
): Promise<ProbeResult> {
  const deno = ["run", "--no-prompt", ...permissions, PROBE, operation, argument];
  const [program, ...args] = wrapper.length ? [...wrapper, Deno.execPath(), ...deno] : [
    Deno.execPath(),
    ...deno,
  ];
  const output = await new Deno.Command(program!, { args, stdout: "piped", stderr: "piped" })
    .output();
  const stdout = new TextDecoder().decode(output.stdout).trim();
  assert.ok(
    output.success && stdout,
    `the probe failed: ${new TextDecoder().decode(output.stderr)}`,
  );
  return JSON.parse(stdout) as ProbeResult;
}

async function withTempDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_permissions_" });
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a read outside --allow-read names the path, the variable and the flag", async () => {
  await withTempDir(async (dir) => {
    const allowed = join(dir, "allowed");
    const config = join(dir, "elsewhere", "config");
    const result = await probe([`--allow-read=${allowed}`], "read", config);
    assert.equal(
      result.explanation,
      `kinglet may not read "${config}": start it with KINGLET_ALLOW_READ=${config} ` +
        `deno task start, or pass --allow-read=${config} to deno run`,
    );
  });
});

Deno.test("a denial wrapped as the cause of another error is explained", async () => {
  await withTempDir(async (dir) => {
    const config = join(dir, "config");
    const result = await probe([`--allow-read=${join(dir, "other")}`], "read-wrapped", config);
    assert.match(result.error ?? "", /^Error: Cannot read kubeconfig/);
    assert.match(result.explanation ?? "", new RegExp(`^kinglet may not read "${config}"`));
  });
});

Deno.test("a path that needs quoting is shell-quoted in the advice", async () => {
  await withTempDir(async (dir) => {
    const config = join(dir, "it's here", "config");
    const result = await probe([`--allow-read=${join(dir, "other")}`], "read", config);
    const quoted = `'${config.replace("'", `'\\''`)}'`;
    assert.ok(
      result.explanation?.includes(`KINGLET_ALLOW_READ=${quoted} deno task start`),
      result.explanation ?? "",
    );
  });
});

Deno.test("an environment variable outside --allow-env is named with KINGLET_ALLOW_ENV", async () => {
  const result = await probe(["--allow-env=HOME"], "env", "AWS_PROFILE");
  assert.equal(
    result.explanation,
    'kinglet may not read the environment variable "AWS_PROFILE": start it with ' +
      "KINGLET_ALLOW_ENV=AWS_PROFILE deno task start, or pass --allow-env=AWS_PROFILE to deno run",
  );
});

Deno.test("reading the whole environment asks for all of it", async () => {
  const result = await probe(["--allow-env=HOME"], "env-all");
  assert.equal(
    result.explanation,
    "kinglet may not read the whole environment: start it with KINGLET_ALLOW_ENV=all " +
      "deno task start, or pass --allow-env to deno run",
  );
});

Deno.test("listening on an address outside --allow-net names host and port", async () => {
  const result = await probe(["--allow-net=127.0.0.1:1"], "listen", "127.0.0.1:18089");
  assert.equal(
    result.explanation,
    'kinglet may not connect to or listen on "127.0.0.1:18089": start it with ' +
      "KINGLET_ALLOW_NET=127.0.0.1:18089 deno task start, or pass --allow-net=127.0.0.1:18089 " +
      "to deno run",
  );
});

Deno.test("running an exec plugin without --allow-run names the program", async () => {
  const result = await probe([], "run", "true");
  assert.match(result.explanation ?? "", /^kinglet may not run "true": start it with/);
  assert.ok(result.explanation?.includes("KINGLET_ALLOW_RUN=true deno task start"));
  assert.ok(result.explanation?.includes("--allow-run=true to deno run"));
});

Deno.test("the hostname without --allow-sys asks for sys access to hostname", async () => {
  const result = await probe([], "hostname");
  assert.match(result.explanation ?? "", /system information "hostname"/);
  assert.ok(result.explanation?.includes("KINGLET_ALLOW_SYS=hostname"));
});

Deno.test("what only --allow-all allows is said to be out of reach", async () => {
  const result = await probe(["--allow-read"], "read", "/proc/self/status");
  assert.equal(
    result.explanation,
    'kinglet may not access "/proc/self/status": Deno allows that only under --allow-all, ' +
      "which kinglet is not given",
  );
});

Deno.test("an error that is no permission denial gets no explanation", async () => {
  await withTempDir(async (dir) => {
    const result = await probe([`--allow-read=${dir}`], "read", join(dir, "missing"));
    assert.match(result.error ?? "", /^NotFound/);
    assert.equal(result.explanation, null);
  });
  assert.equal(explainPermissionError("not an error"), undefined);
  assert.equal(explainPermissionError(new RangeError("out of range")), undefined);
});

Deno.test("a denial in a compiled binary says to rebuild it with the variable", () => {
  // A compiled binary cannot be built without denort; this is Deno's wording
  // for a standalone binary (PermissionDeniedError in deno_permissions).
  const denied = new Deno.errors.NotCapable(
    'Requires read access to "/x/config", specify the required permissions during ' +
      "compilation using `deno compile --allow-read`",
  );
  assert.equal(
    explainPermissionError(denied),
    'kinglet may not read "/x/config": this binary was built without that permission; ' +
      "rebuild it with KINGLET_ALLOW_READ=/x/config deno task compile",
  );
});

const canDropCapabilities = Deno.uid() === 0 && await hasCommand("setpriv");
if (!canDropCapabilities) {
  Deno.stdout.writeSync(
    new TextEncoder().encode("skipped: the operating system denial test needs root and setpriv\n"),
  );
}

Deno.test({
  name: canDropCapabilities
    ? "a file the operating system denies gets advice about the user kinglet runs as"
    : "skipped (needs root and setpriv): a file the operating system denies gets advice",
  ignore: !canDropCapabilities,
  fn: async () => {
    await withTempDir(async (dir) => {
      const secret = join(dir, "k3s.yaml");
      await Deno.writeTextFile(secret, "apiVersion: v1\n");
      await Deno.chmod(secret, 0o600);
      await Deno.chown(secret, 65532, 65532);
      // Root without the capabilities that bypass file modes meets EACCES like any user.
      const result = await probe(["--allow-read"], "read", secret, [
        "setpriv",
        "--bounding-set=-dac_override,-dac_read_search",
      ]);
      assert.match(result.error ?? "", /^PermissionDenied/);
      assert.match(
        result.explanation ?? "",
        new RegExp(`^the operating system denies kinglet access to "${secret}"`),
      );
      assert.ok(result.explanation?.includes("LoadCredential="));
    });
  },
});

async function hasCommand(name: string): Promise<boolean> {
  try {
    return (await new Deno.Command(name, { args: ["--version"], stdout: "null", stderr: "null" })
      .output()).success;
  } catch {
    return false;
  }
}
