/**
 * The database engines a DatabaseCluster can run, and everything kinglet
 * needs to know about each: the image, the versions it vouches for, the port,
 * where data lives, the superuser and how the container takes its password.
 *
 * Images come from Docker Hub's official repositories by their full name, so
 * that a registry mirror configured for `docker.io` serves them on air-gapped
 * sites. Postgres 18 is left out on purpose: its image moved the data
 * directory, which the volume layout here does not follow yet.
 *
 * @example
 * ```ts
 * import { ENGINES, engineImage } from "./engines.ts";
 * ENGINES.postgres.port; // 5432
 * engineImage("mysql", "8.4"); // "docker.io/library/mysql:8.4"
 * ```
 *
 * @module
 */
import type { V1EnvVar, V1Probe } from "../models.ts";

/** The engines kinglet runs. */
export const ENGINE_NAMES = ["postgres", "mysql"] as const;

/** One of {@link ENGINE_NAMES}. */
export type EngineName = typeof ENGINE_NAMES[number];

/** What kinglet knows about one engine. */
export interface Engine {
  /** Image repository; the tag is the spec's version. */
  repository: string;
  /** Major versions supported; a spec version is one of these, optionally with `.minor`. */
  versions: readonly string[];
  /** An example of a full version, for messages. */
  example: string;
  port: number;
  /** The superuser whose password the credentials Secret holds. */
  username: string;
  /** Where the data volume is mounted. */
  dataPath: string;
  /** Container environment, given the credentials Secret's name. */
  env(secretName: string): V1EnvVar[];
  readinessProbe: V1Probe;
}

const secretKey = (secretName: string, key: string) => ({
  secretKeyRef: { name: secretName, key },
});

/** The engines, by name. */
export const ENGINES: Readonly<Record<EngineName, Engine>> = {
  postgres: {
    repository: "docker.io/library/postgres",
    versions: ["14", "15", "16", "17"],
    example: "17.2",
    port: 5432,
    username: "postgres",
    dataPath: "/var/lib/postgresql/data",
    env: (secretName) => [
      { name: "POSTGRES_USER", valueFrom: secretKey(secretName, "username") },
      { name: "POSTGRES_PASSWORD", valueFrom: secretKey(secretName, "password") },
      // initdb refuses a non-empty directory, and a fresh volume's root may hold lost+found.
      { name: "PGDATA", value: "/var/lib/postgresql/data/pgdata" },
    ],
    readinessProbe: {
      exec: { command: ["pg_isready", "--host", "127.0.0.1", "--username", "postgres"] },
      periodSeconds: 10,
    },
  },
  mysql: {
    repository: "docker.io/library/mysql",
    versions: ["8.0", "8.4"],
    example: "8.4.3",
    port: 3306,
    username: "root",
    dataPath: "/var/lib/mysql",
    env: (secretName) => [
      { name: "MYSQL_ROOT_PASSWORD", valueFrom: secretKey(secretName, "password") },
    ],
    readinessProbe: { tcpSocket: { port: "db" }, periodSeconds: 10 },
  },
};

/**
 * Whether kinglet vouches for `version` of `engine`: a supported major,
 * optionally followed by one more numeric component (`16`, `16.4`, `8.4.3`).
 *
 * @example
 * ```ts
 * import { isSupportedVersion } from "./engines.ts";
 * isSupportedVersion("postgres", "16.4"); // true
 * isSupportedVersion("mysql", "5.7"); // false
 * ```
 */
export function isSupportedVersion(engine: EngineName, version: string): boolean {
  return ENGINES[engine].versions.some((major) =>
    version === major || new RegExp(`^${major.replace(".", "\\.")}\\.\\d+$`).test(version)
  );
}

/**
 * The official image of an engine at a version.
 *
 * @example
 * ```ts
 * import { engineImage } from "./engines.ts";
 * engineImage("postgres", "17"); // "docker.io/library/postgres:17"
 * ```
 */
export function engineImage(engine: EngineName, version: string): string {
  return `${ENGINES[engine].repository}:${version}`;
}
