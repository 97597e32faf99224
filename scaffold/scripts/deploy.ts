/**
 * Writes the operator's deploy files from src/operator.ts (`deno task deploy`):
 * deploy/'s RBAC, Namespace, Deployment and kustomization, deploy/systemd/'s
 * units, and the FROM scratch image's Dockerfile and file list. With
 * `--check`, says what differs instead; with `--rootfs <dir> <executable>`,
 * assembles the image's root file system (deploy/Dockerfile.scratch runs it).
 *
 * @module
 */
import { runDeploy } from "@kinglet/kinglet/deploy";
import { operator } from "../src/operator.ts";

await runDeploy(operator, Deno.args);
