import { readFileSync } from "node:fs";

/** Kept in step with package.json by test/index.test.ts. */
export const VERSION = "0.1.0";

/** What the build wrote into dist/build-info.json (scripts/build.mjs): the commit and the date of the build. */
export type BuildInfo = { version: string; commit: string | null; date: string };

/**
 * dist/build-info.json, found from this module (dist/core/version.js) or from the bundle (dist/bin/hl-deadman.cjs);
 * null when running from the sources or when the file is missing or unreadable.
 */
export function buildInfo(): BuildInfo | null {
  for (const relative of ["build-info.json", "../build-info.json"]) {
    try {
      const info = JSON.parse(readFileSync(new URL(relative, import.meta.url), "utf8")) as Partial<BuildInfo>;
      if (typeof info.date === "string")
        return { version: info.version ?? VERSION, commit: info.commit ?? null, date: info.date };
    } catch {}
  }
  return null;
}

/** `hl-deadman --version`: the version first (scripts cut it), then the commit and the build date. */
export function versionText(info: BuildInfo | null = buildInfo()): string {
  if (!info)
    return `${VERSION} (no build info: running from the sources, or dist/build-info.json is missing)`;
  return `${VERSION} (commit ${info.commit ?? "unknown"}, built ${info.date})`;
}
