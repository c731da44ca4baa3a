/**
 * Debian's headless chromium through playwright-core, with the flags known to work in a container and a fresh
 * profile directory (removed by `close`). Fails with the apt-get command when chromium is missing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { requireBinary } from "./binaries.js";

export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const executablePath = requireBinary("chromium");
  const profile = mkdtempSync(join(tmpdir(), "hl-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    timeout: 30_000,
    viewport: { width: 1100, height: 820 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
