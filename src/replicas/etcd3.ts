/**
 * The etcd client, loaded only for `--coordinate` and `hl-deadman replicas`: `etcd3` (and gRPC under it) is an
 * optional peer dependency, installed by those who coordinate replicas (docs/operations.md, "High availability"),
 * so a plain install does not carry gRPC. When it is missing the error names the install command; a config that
 * needs it cannot run without it (exit 78).
 */
import { BaseError } from "../core/errors/base.js";
import { ExitCode } from "../core/exit-codes.js";

export type Etcd3Module = typeof import("etcd3");

/** The version the coordination is tested against (package.json's peerDependencies). */
export const ETCD3_VERSION = "1.1.2";

export class Etcd3MissingError extends BaseError {
  override name = "Etcd3MissingError";
  readonly exitCode = ExitCode.config;
  constructor(what: string) {
    super(`${what} needs the optional package etcd3, which is not installed.`, {
      metaMessages: [
        `Install it beside hl-deadman: npm install -g etcd3@${ETCD3_VERSION} (for a global install), or npm install etcd3@${ETCD3_VERSION} in the directory hl-deadman is installed in.`,
      ],
    });
  }
}

/** Imports etcd3 (CommonJS: its exports are named, or under `default` when node's loader cannot list them). */
export async function loadEtcd3(
  what: string,
  importer: () => Promise<unknown> = () => import("etcd3"),
): Promise<Etcd3Module> {
  let loaded: Etcd3Module;
  try {
    loaded = (await importer()) as Etcd3Module;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") throw new Etcd3MissingError(what);
    throw error;
  }
  return (loaded.Etcd3 ? loaded : (loaded as unknown as { default: Etcd3Module }).default) as Etcd3Module;
}
