/**
 * What a Manager does for a short main.ts: given no client it connects as
 * kubectl would, given `crds` it installs them before starting, and given no
 * signal it runs until SIGINT or SIGTERM. Each runs as its own process, since
 * both the kubeconfig's environment and signals belong to the whole process.
 */
import assert from "node:assert/strict";

const RUNTIME = new URL("../../lib/runtime/mod.ts", import.meta.url).href;
const TESTING = new URL("../../lib/testing/mod.ts", import.meta.url).href;
const KUBE = new URL("../../lib/kube/mod.ts", import.meta.url).href;

/** Deno's cache, kept when a child gets a home of its own (which would move it). */
const DENO_DIR: string = JSON.parse(
  new TextDecoder().decode(
    (await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output()).stdout,
  ),
).denoDir;

/**
 * Starts `code` as a module in a process of its own, with an empty home (no
 * `~/.kube/config`), outside any cluster, and `env` besides.
 */
function start(code: string, env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", code],
    env: {
      KUBECONFIG: "",
      KUBERNETES_SERVICE_HOST: "",
      HOME: "/nonexistent",
      DENO_DIR,
      NO_COLOR: "1",
      ...env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const decoder = new TextDecoder();
  let output = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
  };
  const done = Promise.all([pump(child.stdout), pump(child.stderr), child.status]);
  return {
    child,
    output: () => output,
    async finished(): Promise<{ code: number; output: string }> {
      const [, , status] = await done;
      return { code: status.code, output };
    },
  };
}

Deno.test("a manager given no client fails its run at once when no kubeconfig is found", async () => {
  const run = start(
    `import { Manager } from "${RUNTIME}";
     const manager = new Manager({ metricsAddress: "0", healthAddress: "0", reportingInstance: "t" });
     try { await manager.run(); } catch (error) { console.log(error.name, error.message); }`,
    { KUBECONFIG: "/nonexistent/kubeconfig" },
  );
  const { code, output } = await run.finished();
  assert.equal(code, 0, output);
  assert.match(output, /^ConfigError /);
});

Deno.test("a manager given no client loads the kubeconfig, installs its CRDs before starting and counts its requests", async () => {
  const seen: string[] = [];
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "backups.example.com" },
  };
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const url = new URL(req.url);
    seen.push(`${req.method} ${url.pathname} ${url.searchParams.get("fieldManager") ?? ""}`);
    const established = { conditions: [{ type: "Established", status: "True" }] };
    return Response.json({ ...crd, status: established });
  });
  const dir = await Deno.makeTempDir();
  try {
    const kubeconfig = `${dir}/config`;
    await Deno.writeTextFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "c", cluster: { server: `http://127.0.0.1:${server.addr.port}` } }],
        users: [{ name: "u", user: { token: "t" } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    const run = start(
      `import { Manager } from "${RUNTIME}";
       const manager = new Manager({
         crds: [${JSON.stringify(crd)}],
         reportingController: "example.com/backup",
         metricsAddress: "0", healthAddress: "0", reportingInstance: "t",
       });
       console.log(await manager.run());
       console.log(manager.metrics.render());`,
      { KUBECONFIG: kubeconfig },
    );
    const { code, output } = await run.finished();
    assert.equal(code, 0, output);
    assert.equal(output.trim().split("\n")[0], "stopped");
    const path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/backups.example.com";
    assert.deepEqual(seen.slice(0, 2), [`PATCH ${path} example.com/backup`, `GET ${path} `]);
    const host = `127.0.0.1:${server.addr.port}`;
    assert.match(
      output,
      new RegExp(
        `^rest_client_requests_total\\{code="200",method="PATCH",host="${host}"\\} 1$`,
        "m",
      ),
    );
    assert.match(
      output,
      new RegExp(
        `^rest_client_requests_total\\{code="200",method="GET",host="${host}"\\} [1-9]`,
        "m",
      ),
    );
    assert.match(
      output,
      new RegExp(
        `^rest_client_request_duration_seconds_count\\{verb="PATCH",host="${host}"\\} 1$`,
        "m",
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a manager run without a signal drains and resolves on SIGTERM", async () => {
  const run = start(
    `import { Manager } from "${RUNTIME}";
     import { MemoryCluster, waitFor } from "${TESTING}";
     import { CONFIG_MAPS } from "${KUBE}";
     const cluster = new MemoryCluster();
     cluster.put(CONFIG_MAPS, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "n" } });
     const manager = new Manager({ client: cluster, metricsAddress: "0", healthAddress: "0", reportingInstance: "t" });
     let reconciled = false;
     manager.add({ name: "cm", resource: CONFIG_MAPS, reconcile: () => { reconciled = true; return Promise.resolve({}); } });
     const outcome = manager.run();
     await waitFor("a reconcile", () => reconciled);
     console.log("running");
     console.log(await outcome);`,
    {},
  );
  const started = Date.now();
  while (!run.output().includes("running")) {
    if (Date.now() - started > 60_000) assert.fail(`never ran:\n${run.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  run.child.kill("SIGTERM");
  const { code, output } = await run.finished();
  assert.equal(code, 0, output);
  assert.equal(output.trim().split("\n").at(-1), "stopped");
});
