#!/usr/bin/env node
import { processDeps } from "../cli/deps.js";
import { runCli } from "../cli/program.js";

/**
 * A reader that goes away (`hl-deadman config check | head -1`) is not an error: a one-shot command stops quietly
 * with status 0, as with SIGPIPE, never with a stack trace. The daemon (`run`, not `run --help`) keeps pushing: a
 * log reader that went away (a journald restart, `run | head`) must never be what disarms the switch; its JSON
 * lines go to fd 1 through pino, which drops what it cannot write.
 */
function quietOnBrokenPipe(argv: string[]): void {
  const args = argv.slice(2);
  const daemon =
    args.find((a) => !a.startsWith("-")) === "run" && !args.some((a) => a === "--help" || a === "-h");
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
      if (!daemon) process.exit(0);
    });
  }
}

// No top-level await: the bundle (scripts/bundle.mjs) is CommonJS.
async function main(): Promise<void> {
  quietOnBrokenPipe(process.argv);
  const code = await runCli(process.argv, processDeps());
  process.exitCode = code;
  // End the process explicitly once stdout and stderr have drained: a handle left open (a process manager's IPC
  // channel, a socket) must not keep a failed start "online" (docs/daemon.md, "Start order and exit").
  await Promise.all([process.stdout, process.stderr].map((s) => new Promise((done) => s.write("", done))));
  process.exit(code);
}

void main();
