/**
 * The one YAML writer of the deploy files and of node mode's kubeconfig:
 * what it writes reads back as the object it was written from, with the
 * yaml package and, for block YAML, with the client's own reader.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { commentedYaml } from "../../lib/deploy/_commented_yaml.ts";
import { nodeKubeconfig } from "../../lib/deploy/node_credentials.ts";
import { readBlockYaml } from "../../lib/kube/_block_yaml.ts";

Deno.test("commented YAML parses back to the object it was written from", () => {
  const object = {
    apiVersion: "v1",
    kind: "Thing",
    metadata: { name: "a", labels: { "app.kubernetes.io/name": "x", on: "yes" } },
    flags: [true, 1, "null"],
    items: [{ name: "first", values: ["1", "two words"] }, { nested: { deep: "#not a comment" } }],
    off: false,
  };
  const text = commentedYaml(object, {
    header: [
      "A header long enough to be wrapped at the line width of one hundred characters, or so.",
    ],
    comments: { "items[1]": ["about items[1]"], off: ["about off"] },
  });
  assert.deepEqual(parse(text), object);
  assert.match(text, /^ {2}# about items\[1\]\n {2}- nested:$/m);
  assert.match(text, /^# about off\n"off": false$/m);
});

Deno.test("commented YAML quotes a string only where YAML could read it as something else", () => {
  const plain = ["--leader-elect", "--bind=:8080", "/healthz", "../crds/", "20m", "96Mi", "a:b"];
  const quoted = ["0x1F", "1.5", "0.1.0", "-1", ".inf", "yes", "~", "-", "a:", "two words", ""];
  const text = commentedYaml({ plain, quoted }, { blockLists: ["plain", "quoted"] });
  assert.deepEqual(parse(text), { plain, quoted });
  for (const value of plain) assert.match(text, new RegExp(`^ {2}- ${value}$`, "m"));
  for (const value of quoted) assert.ok(text.includes(`  - ${JSON.stringify(value)}\n`), value);
});

Deno.test("commented YAML writes the lists it is told to one item a line, and empty collections", () => {
  const text = commentedYaml(
    { args: ["run"], verbs: ["get"], none: [], empty: {}, items: [{}] },
    { blockLists: ["args", "verbs"], comments: { "args[0]": ["why run"] } },
  );
  assert.equal(
    text,
    "args:\n  # why run\n  - run\nverbs:\n  - get\nnone: []\nempty: {}\nitems:\n  - {}\n",
  );
});

Deno.test("a comment keeps its own line breaks and wraps only the lines that do not fit", () => {
  const long = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");
  const text = commentedYaml({ a: 1 }, { comments: { a: ["kept  as\nwritten", long] } });
  const lines = text.split("\n");
  assert.deepEqual(lines.slice(0, 2), ["# kept  as", "# written"]);
  assert.ok(lines.slice(2, -2).every((line) => line.startsWith("# ") && line.length <= 100));
  assert.equal(lines.at(-2), "a: 1");
});

Deno.test("node mode's kubeconfig is block YAML the client reads without the yaml package", () => {
  const text = nodeKubeconfig(
    { server: "https://10.0.0.1:6443", caCert: "-----BEGIN CERTIFICATE-----\nMIIC\n" },
    "/var/lib/mirror-operator/kubeconfig.token",
    "mirror-operator-system",
  );
  const expected = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name: "kinglet",
      cluster: {
        server: "https://10.0.0.1:6443",
        "certificate-authority-data": btoa("-----BEGIN CERTIFICATE-----\nMIIC\n"),
      },
    }],
    users: [{ name: "kinglet", user: { tokenFile: "/var/lib/mirror-operator/kubeconfig.token" } }],
    contexts: [{
      name: "kinglet",
      context: { cluster: "kinglet", user: "kinglet", namespace: "mirror-operator-system" },
    }],
    "current-context": "kinglet",
  };
  assert.deepEqual(readBlockYaml(text), expected);
  assert.deepEqual(parse(text), expected);
});
