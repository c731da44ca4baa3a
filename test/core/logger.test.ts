/**
 * The logger for people: when stdout is a terminal, lines are pretty-printed by pino-pretty in the main thread (not a
 * pino transport: the bundled CLI has no pino files for a worker thread to load; src/core/logger.ts). Checked on the
 * real CLI under a real pseudo-terminal (util-linux `script`), through a whole `run --sim`: start, a confirmed push,
 * Ctrl-C, the removal and the last line, which must reach the terminal before the process exits.
 */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");

describe("createLogger on a terminal", () => {
  test("behavior: `run --sim` on a pseudo-terminal prints one coloured line per event, up to the last", async () => {
    const shell = `timeout -s INT 3 ${JSON.stringify(process.execPath)} dist/bin/hl-deadman.js run --sim`;
    const { stdout } = await run("script", ["-qec", shell, "/dev/null"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm" },
      timeout: 20_000,
    }).catch((error: { stdout?: string; code?: unknown }) => {
      if (error.code === "ENOENT")
        throw new Error("`script` (util-linux) is missing: apt-get install -y bsdutils");
      return { stdout: error.stdout ?? "" };
    });
    const lines = stdout.split(/\r?\n/).filter((l) => l.trim() !== "");
    // pretty, not JSON: "[HH:MM:ss.l] LEVEL: message {fields}", the level in colour
    const armed = lines.find((l) => l.includes("armed until"));
    const ESC = String.fromCharCode(27);
    expect(armed).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] /);
    expect(armed).toContain(`${ESC}[32mINFO${ESC}[39m: `);
    expect(armed).toContain('"event":"heartbeat.ok"');
    expect(lines.some((l) => l.startsWith("{"))).toBe(false);
    expect(lines.find((l) => l.includes('"event":"shutdown.removed"'))).toBeDefined();
    expect(lines.at(-1)).toContain('"event":"shutdown.done"');
  });
});
