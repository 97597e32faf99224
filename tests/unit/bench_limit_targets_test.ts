import assert from "node:assert/strict";

const read = async (path: string) =>
  JSON.parse(await Deno.readTextFile(new URL(`../../${path}`, import.meta.url))) as
    & Record<
      string,
      unknown
    >
    & { env: Record<string, string> };

for (const limit of ["64Mi", "72Mi"]) {
  Deno.test(`the kinglet-${limit.toLowerCase()} bench target is kinglet's under KINGLET_MEMORY_LIMIT=${limit}`, async () => {
    const base = await read("bench/targets/kinglet.json");
    const limited = await read(`bench/targets/kinglet-${limit.toLowerCase()}.json`);
    assert.equal(limited.name, `kinglet-${limit}`);
    assert.equal(limited.env.KINGLET_MEMORY_LIMIT, limit);
    const { KINGLET_MEMORY_LIMIT: _, ...env } = limited.env;
    assert.deepEqual(
      { ...limited, name: base.name, description: base.description, env },
      base,
      "the limited target differs from bench/targets/kinglet.json in more than its limit",
    );
  });
}
