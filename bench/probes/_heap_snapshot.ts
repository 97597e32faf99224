/**
 * A small reader of V8 `.heapsnapshot` files: node self sizes summed by node
 * type and name, and the difference of two snapshots, to name what a change
 * added to the heap. Strings are grouped by what they look like (uid, time,
 * digits, `a/b` key) instead of by content.
 *
 * @module
 */

/** Count and self size of one group of heap nodes. */
export interface Group {
  count: number;
  bytes: number;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

const STRING_TYPES = new Set(["string", "concatenated string", "sliced string"]);

function stringGroup(text: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-/.test(text)) return "uid";
  if (/^\d{4}-\d\d-\d\dT/.test(text)) return "RFC 3339 time";
  if (/^\d+$/.test(text)) return "decimal digits";
  if (/^[^/\s]+\/[^/\s]+$/.test(text)) return "a/b (key, label, apiVersion)";
  return "other";
}

/** A snapshot's node self sizes by `type: name`, and its flat strings by content. */
export interface SnapshotGroups {
  groups: Map<string, Group>;
  strings: Map<string, Group>;
}

/**
 * Reads the snapshot in `file`; see {@link SnapshotGroups}.
 *
 * @throws {SyntaxError} when the file is not a heap snapshot.
 */
export async function groupSnapshot(file: string): Promise<SnapshotGroups> {
  const data = JSON.parse(await Deno.readTextFile(file)) as Snapshot;
  const fields = data.snapshot.meta.node_fields;
  const types = data.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const width = fields.length;
  const groups = new Map<string, Group>();
  const contents = new Map<string, Group>();
  const { nodes, strings } = data;
  for (let n = 0; n < nodes.length; n += width) {
    const type = types[nodes[n + typeAt!]!]!;
    const name = strings[nodes[n + nameAt!]!]!;
    const label = STRING_TYPES.has(type)
      ? `${type}: ${stringGroup(name)}`
      : `${type}: ${name.length > 60 ? `${name.slice(0, 57)}...` : name}`;
    const group = groups.get(label) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += nodes[n + sizeAt!]!;
    groups.set(label, group);
    if (type !== "string") continue;
    const copies = contents.get(name) ?? { count: 0, bytes: 0 };
    copies.count++;
    copies.bytes += nodes[n + sizeAt!]!;
    contents.set(name, copies);
  }
  return { groups, strings: contents };
}

/**
 * Lines of a table of what `after` holds beyond `before`, largest first:
 * the `top` groups by self size, then the total.
 */
export async function summarizeSnapshots(
  before: string,
  after: string,
  top: number,
): Promise<string[]> {
  const base = (await groupSnapshot(before)).groups;
  const { groups: grown, strings } = await groupSnapshot(after);
  const diff = [...grown].map(([label, g]) => {
    const b = base.get(label) ?? { count: 0, bytes: 0 };
    return { label, count: g.count - b.count, bytes: g.bytes - b.bytes };
  }).sort((a, b) => b.bytes - a.bytes);
  const total = diff.reduce((sum, d) => sum + d.bytes, 0);
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(2);
  const rows = diff.slice(0, top).map((d) => [
    d.label,
    String(d.count),
    mib(d.bytes),
    d.count > 0 ? String(Math.round(d.bytes / d.count)) : "-",
    `${(100 * d.bytes / total).toFixed(1)}%`,
  ]);
  rows.push(["total", String(diff.reduce((s, d) => s + d.count, 0)), mib(total), "-", "100%"]);
  const header = ["type: name", "nodes", "MiB", "B/node", "share"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(header), ...rows.map(line), "", ...duplicates(strings, top / 3)];
}

/** Lines on the bytes spent on second and later copies of equal strings, worst values first. */
function duplicates(strings: Map<string, Group>, top: number): string[] {
  const wasted = [...strings].filter(([, g]) => g.count > 1)
    .map(([text, g]) => ({ text, count: g.count, bytes: g.bytes - g.bytes / g.count }))
    .sort((a, b) => b.bytes - a.bytes);
  const total = wasted.reduce((sum, w) => sum + w.bytes, 0);
  const all = [...strings.values()].reduce((sum, g) => sum + g.bytes, 0);
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(2);
  return [
    `Flat strings in the last snapshot: ${mib(all)} MiB; ${mib(total)} MiB of it are copies ` +
    `of ${wasted.length} values held more than once. Worst values (copies, MiB of copies):`,
    ...wasted.slice(0, top).map((w) =>
      `  ${w.count.toString().padStart(6)}  ${mib(w.bytes)}  ${JSON.stringify(w.text.slice(0, 70))}`
    ),
  ];
}
