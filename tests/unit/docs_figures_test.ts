/**
 * The in-cluster guide (docs/in-cluster.md) and the manifests agree, and the
 * memory figures they quote come from the benchmark runs committed under
 * bench/latest/.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";

const root = new URL("../../", import.meta.url);
const read = (path: string) => Deno.readTextFileSync(new URL(path, root));

interface Deployment {
  spec: {
    template: {
      spec: {
        containers: { resources: { requests: { memory: string }; limits: { memory: string } } }[];
      };
    };
  };
}

const DEPLOYMENT = read("deploy/deployment.yaml");
const resources = (parse(DEPLOYMENT) as Deployment).spec.template.spec.containers[0]!.resources;

/** The in-cluster guide's paragraph about the Deployment's memory. */
function guideSentence(): string {
  const guide = read("docs/in-cluster.md").replace(/\n/g, " ");
  const match = /\d+ Mi of memory requested and a \d+ Mi limit \([^()]*(?:\([^()]*\)[^()]*)*\)/
    .exec(guide);
  assert.ok(
    match,
    "docs/in-cluster.md no longer states the Deployment's memory request and limit",
  );
  return match[0];
}

/** Whether `figure` (e.g. "87.4") is a cell of a table in `report`. */
function inReport(report: string, figure: string): boolean {
  const cells = report.split("\n").filter((l) => l.startsWith("|")).flatMap((l) => l.split("|"));
  return cells.some((cell) => cell.trim() === figure);
}

/** Every `N MiB` in `text` is a cell of one of the reports `text` cites. */
function assertFiguresFromReports(text: string, where: string): void {
  const reports = [...text.matchAll(/bench\/latest\/([a-z0-9-]+)/g)].map((m) => m[1]!);
  assert.ok(reports.length > 0, `${where} cites no committed run`);
  const contents = reports.map((dir) => read(`bench/latest/${dir}/report.md`));
  const figures = [...text.matchAll(/(\d+(?:\.\d+)?) MiB/g)].map((m) => m[1]!);
  assert.ok(figures.length > 0, `${where} quotes no figure`);
  for (const figure of figures) {
    assert.ok(
      contents.some((report) => inReport(report, figure)),
      `${where}: ${figure} MiB is in none of ${reports.join(", ")}`,
    );
  }
}

Deno.test("docs/in-cluster.md quotes the Deployment's memory request and limit as deploy/ sets them", () => {
  const [request, limit] = [...guideSentence().matchAll(/(\d+) Mi/g)].map((m) => `${m[1]}Mi`);
  assert.equal(request, resources.requests.memory);
  assert.equal(limit, resources.limits.memory);
});

Deno.test("the memory figures behind the Deployment's sizing come from committed runs", () => {
  assertFiguresFromReports(guideSentence(), "docs/in-cluster.md's Deployment paragraph");
  const comment = DEPLOYMENT.split("\n").filter((l) => l.trim().startsWith("#")).join(" ")
    .replace(/\s*#\s*/g, " ");
  const sizing = /Measured by the resource benchmark.*?No CPU limit/.exec(comment);
  assert.ok(sizing, "deploy/deployment.yaml no longer says where its memory figures come from");
  assertFiguresFromReports(sizing[0], "deploy/deployment.yaml");
});

Deno.test("the request covers steady memory and the limit covers the restart peak", () => {
  const mebibytes = (q: string) => Number(q.replace(/Mi$/, ""));
  const sentence = guideSentence();
  const steady = Number(/([\d.]+) MiB steady/.exec(sentence)![1]);
  const peak = Number(/([\d.]+) MiB peak/.exec(sentence)![1]);
  assert.ok(mebibytes(resources.requests.memory) >= steady);
  assert.ok(mebibytes(resources.limits.memory) >= peak);
});
