/**
 * The FROM scratch image: a multi-stage Dockerfile that compiles the
 * operator per architecture and copies it into an empty image with the
 * dynamic loader, the few libraries it links and CA certificates, its
 * dockerignore, and that file list ({@link SCRATCH_FILES}), which
 * `assembleRootfs` (rootfs.ts) copies in the build stage.
 *
 * @example
 * ```ts
 * import { dockerfile } from "./image_files.ts";
 * import { describeOperator } from "./operator.ts";
 * import { CONFIG_MAPS } from "../kube/mod.ts";
 * const operator = describeOperator({
 *   name: "mirror-operator",
 *   envPrefix: "MIRROR_",
 *   image: "ghcr.io/example/mirror-operator:0.1.0",
 *   controllers: [{ name: "mirror", resource: CONFIG_MAPS }],
 * });
 * dockerfile(operator).includes('ENTRYPOINT ["/mirror-operator"]'); // true
 * ```
 *
 * @module
 */
import { comment } from "./_comment.ts";
import { type Operator } from "./operator.ts";
import { RUNTIME_ENV } from "../build/mod.ts";

/** The architectures the image is built for, as Deno names them. */
export const SCRATCH_ARCHES = ["x86_64", "aarch64"] as const;
/** One of {@link SCRATCH_ARCHES}. */
export type ScratchArch = typeof SCRATCH_ARCHES[number];

/**
 * What the image holds besides the binary, per architecture (`undefined`:
 * both): the dynamic loader and the libraries `ldd` lists for deno, which a
 * compiled operator (denort plus the program) links the same way, and the
 * public roots.
 */
export const SCRATCH_FILES: readonly { path: string; arch?: ScratchArch }[] = [
  ...(["x86_64", "aarch64"] as const).flatMap((arch) => {
    const lib = `/lib/${arch}-linux-gnu`;
    const loader = arch === "x86_64" ? "/lib64/ld-linux-x86-64.so.2" : "/lib/ld-linux-aarch64.so.1";
    return [
      loader,
      ...["libc.so.6", "libdl.so.2", "libgcc_s.so.1", "libm.so.6"].map((l) => `${lib}/${l}`),
      `${lib}/libpthread.so.0`,
      `${lib}/librt.so.1`,
    ].map((path) => ({ path, arch }));
  }),
  { path: "/etc/ssl/certs/ca-certificates.crt" },
];

/** The image's file list, one absolute path a line, a line tagged `[arch]` for that one only. */
export function scratchFilesTxt(operator: Operator): string {
  const proof = operator.notes.rootfsProof ?? [];
  const tagged = (arch: ScratchArch) =>
    SCRATCH_FILES.filter((f) => f.arch === arch).map((f) => `[${arch}] ${f.path}\n`).join("");
  return `${
    comment(
      `What the FROM scratch image holds besides /${operator.name}, one absolute path a line, ` +
        "copied (symbolic links followed) from the Debian bookworm build stage of " +
        `${operator.layout.dockerfile} by ${rootfsScriptFile(operator)}. A line tagged [x86_64] ` +
        "or [aarch64] belongs to that architecture's image only.",
    )
  }${proof.map((line) => `# ${line}\n`).join("")}#
# The dynamic loader and the libraries that \`ldd\` lists for deno, which a
# compiled ${operator.name} (denort plus the program) links the same way.
${tagged("x86_64")}${
    tagged("aarch64")
  }# Public roots, for DENO_TLS_CA_STORE=system (a TLS-inspecting proxy's CA added
# to the build stage's store); the API server's own CA comes from the kubeconfig
# or the service account.
${SCRATCH_FILES.filter((f) => f.arch === undefined).map((f) => `${f.path}\n`).join("")}`;
}

/** The script file of the rootfs command, without its arguments. */
function rootfsScriptFile(operator: Operator): string {
  return operator.rootfsScript.split(" ")[0]!;
}

/** The image's name without its registry and path: `kinglet:0.1.0`. */
function localTag(image: string): string {
  return image.slice(image.lastIndexOf("/") + 1);
}

/** The Dockerfile of the FROM scratch image. */
export function dockerfile(operator: Operator): string {
  const { name, image, layout, notes } = operator;
  const file = layout.dockerfile;
  const build = notes.build ?? `deno task ${operator.compileTask}`;
  const environment = notes.environment ? ` (${notes.environment} ${operator.envPrefix}ENV)` : "";
  const ports = operator.ports.map((p) => p.port).join(" ");
  const env = Object.entries(RUNTIME_ENV).map(([key, value]) => `ENV ${key}=${value}\n`).join("");
  return `# syntax=docker/dockerfile:1
${
    comment(
      `${name} as a FROM scratch image: the compiled binary, the dynamic loader, the few shared ` +
        `libraries it links and CA certificates (${layout.scratchFiles}), and nothing else: no ` +
        "shell, no package manager, no /etc/passwd. The binary is compiled from the bundle of " +
        `main.ts (${build}) with --no-code-cache, so it runs as the numeric user 65532 and ` +
        `never writes: a read-only root file system suits it (${layout.deploy}/deployment.yaml).`,
    )
  }#
#   docker build --platform linux/amd64 -f ${file} -t ${image} .
#   docker buildx build --platform linux/amd64,linux/arm64 -f ${file} -t ${image} .
#
${
    comment(
      "The build stage runs on the image's platform (under emulation for another one), so the " +
        `libraries it copies are the image's: ${layout.scratchFiles} lists them for x86_64 and ` +
        "for aarch64.",
    )
  }#
# Air-gapped (no dl.deno.land): put an unzipped denort of the same Deno version
# inside the build context and name it, relative to the context:
#
#   docker build --platform linux/amd64 -f ${file} \\
#     --build-arg DENORT_BIN=vendor/denort-x86_64-unknown-linux-gnu -t ${localTag(image)} .
#
# (for linux/arm64, vendor/denort-aarch64-unknown-linux-gnu).
#
${
    comment(
      `Deno, esbuild (deno bundle fetches it) and ${name}'s npm dependencies come from the npm ` +
        "registry, or from a mirror:",
    )
  }# --build-arg NPM_CONFIG_REGISTRY=https://npm.example.internal/

FROM node:22-bookworm-slim AS build
ARG TARGETARCH
ARG DENORT_BIN=""
ARG NPM_CONFIG_REGISTRY=https://registry.npmjs.org/
# The build stage is also where the image's libraries and CA bundle come from.
RUN apt-get update \\
 && apt-get install -y --no-install-recommends ca-certificates \\
 && rm -rf /var/lib/apt/lists/*
RUN npm install --global deno@${operator.denoVersion}
WORKDIR /src
COPY . .
# Bundles main.ts into dist/bundle/, then compiles dist/bundle/main.js for the
# image's architecture (Docker's amd64 / arm64, Deno's x86_64 / aarch64).
RUN case "\${TARGETARCH:-amd64}" in \\
      amd64) arch=x86_64 ;; \\
      arm64) arch=aarch64 ;; \\
      *) echo "no ${name} image for $TARGETARCH: build linux/amd64 or linux/arm64" >&2; exit 1 ;; \\
    esac \\
 && deno task ${operator.compileTask} --target "$arch-unknown-linux-gnu" \\
 && deno run --allow-read --allow-write=/rootfs ${operator.rootfsScript} \\
      /rootfs "dist/${name}-$arch-unknown-linux-gnu"

FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
${
    comment(
      `${name}'s environment${environment}: glibc returns the buffers of large objects when ` +
        "freed; only the service account's CA is trusted.",
    )
  }${env}EXPOSE ${ports}
ENTRYPOINT ["/${name}"]
CMD [${operator.command.map((arg) => JSON.stringify(arg)).join(", ")}]
`;
}

/** The dockerignore beside the Dockerfile: sources only in the build context. */
export function dockerignore(operator: Operator): string {
  return `${
    comment(
      `The build context of ${operator.layout.dockerfile}: sources only, not the local control ` +
        "plane, test clusters or earlier binaries under .cache/ and dist/.",
    )
  }.cache/
dist/
.git/
`;
}
