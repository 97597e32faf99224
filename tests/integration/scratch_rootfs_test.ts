/**
 * The FROM scratch image without Docker: hack/scratch_rootfs.ts assembles
 * exactly the files Dockerfile.scratch copies into a folder, and an
 * executable runs there under chroot as the image's user 65532, with no
 * shell and no /etc/passwd. Deno itself stands in for kinglet, since a
 * compiled kinglet links the same libraries; kinglet itself runs there too
 * when DENORT_BIN lets this machine compile it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { compileArgs } from "../../hack/compile.ts";
import {
  assembleRootfs,
  ENTRYPOINT,
  type ScratchArch,
  scratchFiles,
} from "../../hack/scratch_rootfs.ts";
import { VERSION } from "../../lib/cli/version.ts";
import { kingletBundle } from "../_support/kinglet_bundle.ts";

const encoder = new TextEncoder();
function say(message: string): void {
  Deno.stdout.writeSync(encoder.encode(`${message}\n`));
}

async function run(program: string, args: string[]): Promise<Deno.CommandOutput | undefined> {
  try {
    return await new Deno.Command(program, { args, stdout: "piped", stderr: "piped" }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

const isX86Linux = Deno.build.os === "linux" && Deno.build.arch === "x86_64";
const isRoot = Deno.uid() === 0;
const canChroot = isX86Linux && isRoot && (await run("chroot", ["--version"]))?.success === true;
const chrootSkip = !isX86Linux
  ? "the image's file list is for x86_64 Linux"
  : !isRoot
  ? "chroot to user 65532 needs root"
  : !canChroot
  ? "chroot is not installed"
  : undefined;
const denort = Deno.env.get("DENORT_BIN");
const kingletSkip = chrootSkip ??
  (denort ? undefined : "DENORT_BIN is unset, so no kinglet binary can be compiled here");
if (chrootSkip) say(`skipped: running inside the rootfs: ${chrootSkip}`);
if (kingletSkip) say(`skipped: kinglet --version inside the rootfs: ${kingletSkip}`);

/** Runs `args` at the rootfs' ENTRYPOINT as 65532:65532, as the image's USER line does. */
function inRootfs(dir: string, args: string[]): Promise<Deno.CommandOutput | undefined> {
  return run("chroot", ["--userspec=65532:65532", dir, ENTRYPOINT, ...args]);
}

async function withRootfs(executable: string, body: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "kinglet_rootfs_" });
  try {
    await assembleRootfs(dir, executable, { link: true });
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: isX86Linux
    ? "the scratch file list holds the loader and every library ldd finds for deno"
    : "skipped (x86_64 Linux only): the scratch file list holds every library ldd finds",
  ignore: !isX86Linux,
  fn: async () => {
    const ldd = await run("ldd", [Deno.execPath()]);
    assert.ok(ldd?.success, "ldd failed or is missing");
    const needed = [...text(ldd.stdout).matchAll(/(?:=> )?(\/\S+) \(0x/g)].map((m) => m[1]!);
    assert.ok(needed.length >= 2, `ldd printed no paths:\n${text(ldd.stdout)}`);
    const listed = await scratchFiles();
    const missing = needed.filter((path) => !listed.includes(path));
    assert.deepEqual(missing, [], "hack/scratch_files.txt misses what deno links");
  },
});

/** `e_machine` of a 64-bit little-endian ELF file, or a reason it is not one. */
async function elfMachine(path: string): Promise<number | string> {
  const file = await Deno.open(path);
  try {
    const header = new Uint8Array(20);
    const read = await file.read(header);
    if (read !== 20 || header[0] !== 0x7f || String.fromCharCode(...header.slice(1, 4)) !== "ELF") {
      return "not an ELF file";
    }
    if (header[4] !== 2 || header[5] !== 1) return "not a 64-bit little-endian ELF file";
    return new DataView(header.buffer).getUint16(18, true);
  } finally {
    file.close();
  }
}

const EM: Record<ScratchArch, number> = { x86_64: 62, aarch64: 183 };

/** Where each architecture's listed libraries are read from: this machine, or Debian's packages. */
async function libraryRoot(arch: ScratchArch): Promise<string | { skip: string }> {
  if (arch === Deno.build.arch) return "/";
  const debian = { x86_64: "amd64", aarch64: "arm64" }[arch];
  const script = new URL("../../hack/debian_arch_libs.sh", import.meta.url).pathname;
  const fetched = await run("bash", [script, debian]);
  if (!fetched?.success) {
    return {
      skip: `cannot fetch Debian's ${debian} libraries: ${
        text(fetched?.stderr ?? new Uint8Array()).trim()
      }`,
    };
  }
  return text(fetched.stdout).trim().split("\n").at(-1)!;
}

for (const arch of ["x86_64", "aarch64"] as const) {
  const root = Deno.build.os === "linux" ? await libraryRoot(arch) : { skip: "Linux only" };
  if (typeof root !== "string") say(`skipped: the ${arch} file list's ELF headers: ${root.skip}`);
  Deno.test({
    name: typeof root === "string"
      ? `every library of the ${arch} image is a 64-bit ELF object for ${arch}`
      : `skipped (${root.skip}): the ${arch} image's libraries`,
    ignore: typeof root !== "string",
    fn: async () => {
      const libraries = (await scratchFiles(arch)).filter((p) => p.startsWith("/lib"));
      assert.ok(libraries.length >= 7, `only ${libraries.length} libraries listed for ${arch}`);
      const wrong: string[] = [];
      for (const path of libraries) {
        const machine = await elfMachine(join(root as string, path));
        if (machine !== EM[arch]) wrong.push(`${path}: ${machine}`);
      }
      assert.deepEqual(wrong, [], `libraries listed for ${arch} that are not ${arch} ELF objects`);
      const others = (await scratchFiles(arch === "x86_64" ? "aarch64" : "x86_64"))
        .filter((p) => p.startsWith("/lib"));
      assert.deepEqual(others.filter((p) => libraries.includes(p)), [], "a library in both lists");
    },
  });
}

Deno.test({
  name: chrootSkip
    ? `skipped (${chrootSkip}): deno runs inside the rootfs as 65532`
    : "deno runs inside the rootfs as 65532, with no shell and no /etc/passwd",
  ignore: chrootSkip !== undefined,
  fn: async () => {
    await withRootfs(Deno.execPath(), async (dir) => {
      const output = await inRootfs(dir, ["--version"]);
      assert.ok(output?.success, `deno --version failed in the rootfs: ${text(output!.stderr)}`);
      assert.match(
        text(output.stdout),
        new RegExp(`^deno ${Deno.version.deno.replaceAll(".", "\\.")} `),
      );
      for (const absent of ["/bin/sh", "/etc/passwd", "/usr/bin"]) {
        await assert.rejects(Deno.lstat(join(dir, absent)), Deno.errors.NotFound);
      }
    });
  },
});

Deno.test({
  name: kingletSkip
    ? `skipped (${kingletSkip}): kinglet --version runs inside the rootfs`
    : "kinglet --version runs inside the rootfs and a denial there says to rebuild",
  ignore: kingletSkip !== undefined,
  fn: async () => {
    const build = await Deno.makeTempDir({ prefix: "kinglet_binary_" });
    try {
      const binary = join(build, "kinglet");
      await kingletBundle();
      const compiled = await new Deno.Command(Deno.execPath(), {
        args: compileArgs("x86_64-unknown-linux-gnu", binary, {}),
        env: { DENORT_BIN: denort! },
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(compiled.success, `deno compile failed: ${text(compiled.stderr)}`);
      await withRootfs(binary, async (dir) => {
        const version = await inRootfs(dir, ["--version"]);
        assert.ok(version?.success, `kinglet --version failed: ${text(version!.stderr)}`);
        assert.equal(text(version.stdout).trim(), VERSION);
        const denied = await inRootfs(dir, ["run", "--kubeconfig", "/etc/kubeconfig"]);
        assert.equal(denied?.code, 1);
        assert.match(
          text(denied!.stderr),
          /may not read "\/etc\/kubeconfig".*KINGLET_ALLOW_READ=\/etc\/kubeconfig deno task compile/,
        );
      });
    } finally {
      await Deno.remove(build, { recursive: true });
    }
  },
});
