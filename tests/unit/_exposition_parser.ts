/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for tests:
 * it throws on the first line that is not valid, and checks what a scraper
 * relies on (one TYPE per family before its samples, families contiguous,
 * histogram buckets cumulative and ending in +Inf equal to _count).
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help?: string;
  type: string;
  samples: Sample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = "[a-zA-Z_][a-zA-Z0-9_]*";
const FLOAT = /^(?:[+-]?Inf|NaN|[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

export function parseExposition(text: string): Map<string, Family> {
  if (text !== "" && !text.endsWith("\n")) throw new Error("output must end with a newline");
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  let current: Family | undefined;
  const lines = text === "" ? [] : text.slice(0, -1).split("\n");
  lines.forEach((line, i) => {
    const where = `line ${i + 1} ${JSON.stringify(line)}`;
    const open = (name: string): Family => {
      if (current?.name === name) return current;
      if (current) closed.add(current.name);
      if (closed.has(name) || families.has(name)) {
        throw new Error(`${where}: family ${name} is split`);
      }
      current = { name, type: "untyped", samples: [] };
      families.set(name, current);
      return current;
    };
    const help = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(line);
    if (help) {
      const family = open(help[1]!);
      if (family.help !== undefined || family.samples.length > 0) {
        throw new Error(`${where}: late HELP`);
      }
      family.help = unescape(help[2]!, false, where);
      return;
    }
    const type = new RegExp(`^# TYPE (${NAME}) (\\w+)$`).exec(line);
    if (type) {
      const family = open(type[1]!);
      if (!TYPES.has(type[2]!)) throw new Error(`${where}: unknown type`);
      if (family.samples.length > 0) throw new Error(`${where}: TYPE after samples`);
      family.type = type[2]!;
      return;
    }
    if (line.startsWith("#")) throw new Error(`${where}: stray comment`);
    const sample = parseSample(line, where);
    let familyName = sample.name;
    if (current?.type === "histogram") {
      const base = sample.name.replace(/_(bucket|sum|count)$/, "");
      if (base === current.name) familyName = base;
    }
    open(familyName).samples.push(sample);
  });
  for (const family of families.values()) {
    if (family.type === "histogram") checkHistogram(family);
  }
  return families;
}

function parseSample(line: string, where: string): Sample {
  const head = new RegExp(`^(${NAME})`).exec(line);
  if (!head) throw new Error(`${where}: bad metric name`);
  const name = head[1]!;
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith("{")) {
    rest = rest.slice(1);
    while (!rest.startsWith("}")) {
      const pair = new RegExp(`^(${LABEL})="((?:[^"\\\\\\n]|\\\\.)*)"(,?)`).exec(rest);
      if (!pair) throw new Error(`${where}: bad label pair at ${JSON.stringify(rest)}`);
      if (pair[1]! in labels) throw new Error(`${where}: repeated label ${pair[1]}`);
      labels[pair[1]!] = unescape(pair[2]!, true, where);
      rest = rest.slice(pair[0].length);
      if (!pair[3] && !rest.startsWith("}")) throw new Error(`${where}: missing comma`);
    }
    rest = rest.slice(1);
  }
  const parts = rest.split(" ");
  if (parts[0] !== "" || parts.length < 2 || parts.length > 3) {
    throw new Error(`${where}: expected one space, a value and an optional timestamp`);
  }
  if (!FLOAT.test(parts[1]!)) throw new Error(`${where}: bad value ${parts[1]}`);
  if (parts[2] !== undefined && !/^-?\d+$/.test(parts[2])) {
    throw new Error(`${where}: bad timestamp`);
  }
  return {
    name,
    labels,
    value: parseFloat(parts[1]!.replace(/^\+?Inf$/, "Infinity").replace("-Inf", "-Infinity")),
  };
}

function unescape(text: string, quotes: boolean, where: string): string {
  return text.replace(/\\(.?)/g, (_, c: string) => {
    if (c === "\\") return "\\";
    if (c === "n") return "\n";
    if (c === '"' && quotes) return '"';
    throw new Error(`${where}: invalid escape \\${c}`);
  });
}

function checkHistogram(family: Family): void {
  const series = new Map<string, Sample[]>();
  for (const sample of family.samples) {
    const { le: _le, ...rest } = sample.labels;
    const id = JSON.stringify(Object.entries(rest).sort());
    series.set(id, [...(series.get(id) ?? []), sample]);
  }
  for (const [id, samples] of series) {
    const buckets = samples.filter((s) => s.name === `${family.name}_bucket`);
    const count = samples.find((s) => s.name === `${family.name}_count`);
    const sum = samples.find((s) => s.name === `${family.name}_sum`);
    if (!count || !sum || buckets.length === 0) throw new Error(`${family.name}${id}: incomplete`);
    let lastLe = -Infinity;
    let lastCount = 0;
    for (const bucket of buckets) {
      const le = bucket.labels.le;
      if (le === undefined || !FLOAT.test(le)) throw new Error(`${family.name}${id}: bad le ${le}`);
      const bound = le === "+Inf" ? Infinity : parseFloat(le);
      if (!(bound > lastLe)) throw new Error(`${family.name}${id}: le not increasing at ${le}`);
      if (bucket.value < lastCount) throw new Error(`${family.name}${id}: buckets not cumulative`);
      lastLe = bound;
      lastCount = bucket.value;
    }
    if (lastLe !== Infinity) throw new Error(`${family.name}${id}: no +Inf bucket`);
    if (lastCount !== count.value) throw new Error(`${family.name}${id}: +Inf bucket != _count`);
  }
}
