import assert from "node:assert/strict";
import { datastoreFromEnv, datastoreProcess } from "../../lib/testing/control_plane/_datastore.ts";

const layout = { dir: "/tmp/c1", ports: { etcdClient: 2379, etcdPeer: 2380, apiserver: 6443 } };

function withDatastoreEnv(value: string | undefined, body: () => void): void {
  const before = Deno.env.get("KINGLET_DATASTORE");
  if (value === undefined) Deno.env.delete("KINGLET_DATASTORE");
  else Deno.env.set("KINGLET_DATASTORE", value);
  try {
    body();
  } finally {
    if (before === undefined) Deno.env.delete("KINGLET_DATASTORE");
    else Deno.env.set("KINGLET_DATASTORE", before);
  }
}

Deno.test("the datastore is etcd unless KINGLET_DATASTORE names kine, and a typo is refused with the choices", () => {
  withDatastoreEnv(undefined, () => assert.equal(datastoreFromEnv(), "etcd"));
  withDatastoreEnv("kine", () => assert.equal(datastoreFromEnv(), "kine"));
  withDatastoreEnv(
    "sqlite",
    () => assert.throws(() => datastoreFromEnv(), /KINGLET_DATASTORE=sqlite .* use etcd or kine/),
  );
});

Deno.test("kine listens where etcd's client URL would, on SQLite in the cluster folder, without its :8080 metrics", () => {
  const args = datastoreProcess("kine").args(layout);
  assert.ok(args.includes("--listen-address=127.0.0.1:2379"), args.join(" "));
  assert.ok(args.includes("--metrics-bind-address=0"), args.join(" "));
  assert.match(
    args.find((a) => a.startsWith("--endpoint="))!,
    /^--endpoint=sqlite:\/\/\/tmp\/c1\/kine\/state\.db\?_journal=WAL/,
  );
  assert.ok(
    datastoreProcess("etcd").args(layout).includes("--listen-client-urls=http://127.0.0.1:2379"),
  );
});
