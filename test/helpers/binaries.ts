/**
 * Locates the external programs some tests need (promtool, prometheus, amtool, chromium, perl). A missing program
 * is a test FAILURE whose message carries the install command: these tests never skip silently (`.ci/run`
 * installs the Debian packages).
 */
import { accessSync, constants } from "node:fs";
import path from "node:path";

/** Program name -> Debian package that provides it. */
export const DEBIAN_PACKAGE: Readonly<Record<string, string>> = Object.freeze({
  promtool: "prometheus",
  prometheus: "prometheus",
  amtool: "prometheus-alertmanager",
  chromium: "chromium",
  perl: "perl-base",
  "systemd-analyze": "systemd",
  etcd: "etcd-server",
  faketime: "faketime",
});

export class MissingBinaryError extends Error {
  override name = "MissingBinaryError";
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Absolute path of `name` on PATH (or the given absolute path), else throws with the apt-get command. */
export function requireBinary(name: string, envPath = process.env.PATH ?? ""): string {
  if (path.isAbsolute(name)) {
    if (executable(name)) return name;
  } else {
    for (const dir of envPath.split(path.delimiter)) {
      if (dir === "") continue;
      const file = path.join(dir, name);
      if (executable(file)) return file;
    }
  }
  const base = path.basename(name);
  const pkg = DEBIAN_PACKAGE[base] ?? base;
  throw new MissingBinaryError(
    `${base} is not installed (not found on PATH). Install it with: apt-get install -y ${pkg} ` +
      "(.ci/run does this on a fresh machine)",
  );
}
