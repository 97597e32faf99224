import assert from "node:assert/strict";
import path from "node:path";
import { dirname, resolvePath } from "../../lib/kube/_path.ts";

const SEGMENTS: string[][] = [
  ["/etc/kube", "config"],
  ["/etc/kube", "../certs/ca.crt"],
  ["/etc/kube", "/abs/token"],
  ["relative/config"],
  ["./a/./b/../c"],
  ["/"],
  ["/a/b/", ""],
  ["", "x"],
  ["/home/me", ".kube", "config"],
  ["/a", "b", "../../../.."],
  ["a//b///c/"],
];

Deno.test("resolvePath resolves as node:path does on POSIX", () => {
  for (const segments of SEGMENTS) {
    assert.equal(resolvePath(...segments), path.posix.resolve(...segments), segments.join(" + "));
  }
});

Deno.test("dirname gives a path's folder as node:path does", () => {
  for (const p of ["/etc/kube/config", "/config", "/", "config", "/a/b/", "a/b", "/a//b"]) {
    assert.equal(dirname(p), path.posix.dirname(p), p);
  }
});
