/**
 * The README is a front door and the guides under docs/ hold the rest: the
 * README stays short, names every guide, keeps the two commands CI and the
 * hook run, and no relative link of the README or a guide points at a file or
 * a heading that is not there. The TypeScript blocks of both type-check
 * against kinglet's public modules, by the names an author imports.
 */
import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAX_README_LINES = 300;

/** `README.md` and every `docs/*.md`, as repository paths. */
function documents(): string[] {
  const guides = [...Deno.readDirSync(join(ROOT, "docs"))]
    .filter((entry) => entry.isFile && entry.name.endsWith(".md"))
    .map((entry) => `docs/${entry.name}`)
    .sort();
  return ["README.md", ...guides];
}

const read = (path: string) => Deno.readTextFileSync(join(ROOT, path));

/** `markdown` without its fenced code blocks and inline code spans, which hold no links. */
function prose(markdown: string): string {
  return markdown.replace(/^( *)(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\2[ \t]*$/gm, "")
    .replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "").replace(/\s/g, "-");
}

/** The anchors of a markdown file's headings, a repeated one suffixed `-1`, `-2` as GitHub does. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const [, text] of prose(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(text!.replace(/`/g, ""));
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** The relative links of a markdown file: no scheme, no protocol-relative host. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:|^\/\//i.test(target));
}

/** What is wrong with `link` written in `from`, or undefined when it resolves. */
function brokenLink(from: string, link: string): string | undefined {
  const [path, anchor] = link.split("#", 2) as [string, string | undefined];
  const target = path === "" ? from : join(dirname(from), decodeURIComponent(path));
  if (relative(ROOT, join(ROOT, target)).startsWith("..")) return "leaves the repository";
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(join(ROOT, target));
  } catch {
    return `${target} does not exist`;
  }
  if (anchor === undefined || anchor === "" || !info.isFile || !target.endsWith(".md")) {
    return undefined;
  }
  return anchors(read(target)).has(anchor) ? undefined : `${target} has no heading #${anchor}`;
}

Deno.test("an anchor is the heading in lower case, punctuation dropped and spaces hyphenated", () => {
  assert.equal(slug("Node mode (systemd)"), "node-mode-systemd");
  assert.equal(slug("Requeues, retries and rate limits"), "requeues-retries-and-rate-limits");
  assert.equal(slug("V8 flags and the bundle"), "v8-flags-and-the-bundle");
  assert.deepEqual([...anchors("# A\n\n```sh\n# not a heading\n```\n## A\n")], ["a", "a-1"]);
});

Deno.test("a link check refuses a missing file and a missing heading, and skips code", () => {
  const links = relativeLinks(
    "[a](docs/x.md) [b](https://example.com) `[c](nowhere.md)`\n```\n[d](gone.md)\n```\n[e](#top)",
  );
  assert.deepEqual(links, ["docs/x.md", "#top"]);
  assert.match(brokenLink("README.md", "docs/no-such-guide.md")!, /does not exist/);
  assert.match(brokenLink("README.md", "README.md#no-such-heading")!, /no heading/);
  assert.equal(brokenLink("README.md", "README.md#two-commands"), undefined);
  assert.equal(brokenLink("docs/performance.md", "../bench/README.md"), undefined);
});

Deno.test(`README.md is a front door of at most ${MAX_README_LINES} lines`, () => {
  const lines = read("README.md").split("\n").length - 1;
  assert.ok(lines <= MAX_README_LINES, `README.md has ${lines} lines, over ${MAX_README_LINES}`);
});

Deno.test("README.md keeps the two commands verbatim", () => {
  const readme = read("README.md");
  for (const command of ["npx -y deno@2.9.6 task dev", "npx -y deno@2.9.6 task test"]) {
    assert.ok(readme.includes(command), `README.md no longer says ${command}`);
  }
});

Deno.test("README.md links every guide under docs/", () => {
  const linked = new Set(relativeLinks(read("README.md")).map((link) => link.split("#")[0]));
  const guides = documents().filter((path) => path.startsWith("docs/"));
  assert.ok(guides.length > 0, "docs/ holds no guide");
  assert.deepEqual(guides.filter((guide) => !linked.has(guide)), []);
});

Deno.test("every relative link of README.md and docs/*.md reaches a file and its heading", () => {
  const broken: string[] = [];
  for (const path of documents()) {
    for (const link of relativeLinks(read(path))) {
      const problem = brokenLink(path, link);
      if (problem) broken.push(`${path}: (${link}) ${problem}`);
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("the TypeScript blocks of README.md and docs/*.md type-check", async () => {
  const blocks = documents().flatMap((path) =>
    [...read(path).matchAll(/^ *```(?:ts|typescript)[ \t]*$/gm)].map(() => path)
  );
  assert.ok(blocks.length > 0, "no TypeScript block to check");
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["check", "--quiet", "--doc-only", ...documents()],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  assert.equal(code, 0, decoder.decode(stdout) + decoder.decode(stderr));
});
