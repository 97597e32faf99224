import assert from "node:assert/strict";
import { parse, stringify } from "yaml";
import { NOT_BLOCK_YAML, readBlockYaml } from "../../lib/kube/_block_yaml.ts";

/** A kubeconfig as kubectl config view --raw and k3s write it. */
const KUBECTL = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM=
    server: https://127.0.0.1:6443
  name: default
contexts:
- context:
    cluster: default
    namespace: kube-system # the operator's namespace
    user: default
  name: default
current-context: default
kind: Config
preferences: {}
users:
- name: default
  user:
    client-certificate-data: "LS0tLS1CRUdJTi"
    client-key-data: 'it''s quoted'
    token: 0123abc
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: aws
      args:
        - eks
        - get-token
      env: null
      provideClusterInfo: false
      interactiveMode: IfAvailable
`;

Deno.test("a kubectl-style kubeconfig reads as the yaml package reads it", () => {
  assert.deepEqual(readBlockYaml(KUBECTL), parse(KUBECTL));
});

Deno.test("what the yaml package writes of a kubeconfig reads back the same", () => {
  const doc = parse(KUBECTL);
  for (const text of [stringify(doc), stringify(doc, { indentSeq: false })]) {
    assert.deepEqual(readBlockYaml(text), doc);
  }
});

Deno.test("scalars resolve as the YAML 1.2 core schema does", () => {
  const lines = [
    "a: ~",
    "b: null",
    "c: true",
    "d: False",
    "e: -12",
    "f: 0123abc",
    '"g h": "tab\\tand \\u00e9"',
    "i: 'single ''quoted'''",
    "j: https://x:6443/path#frag",
    "k: value # comment",
    "l:",
    "m: 1.2.3",
  ].join("\n");
  assert.deepEqual(readBlockYaml(lines), parse(lines));
});

Deno.test("YAML beyond the block subset is left to the full parser", () => {
  for (
    const text of [
      "a: &x 1\nb: *x",
      "a: !!str 1",
      "a: |\n  text",
      "a: {b: 1}",
      "a: [1, 2]",
      "---\na: 1\n---\nb: 2",
      "a: 1.5",
      "a: 0x1F",
      "a: 1\na: 2",
      "a: plain\n  continued",
      "\ta: 1",
      '{"apiVersion": "v1"}',
    ]
  ) {
    assert.equal(readBlockYaml(text), NOT_BLOCK_YAML, text);
  }
});

Deno.test("an empty or comment-only file is null, as for the yaml package", () => {
  assert.equal(readBlockYaml(""), null);
  assert.equal(readBlockYaml("# nothing\n\n"), parse("# nothing\n\n"));
});
