#!/usr/bin/env node
import { processDeps } from "../cli/deps.js";
import { runCli } from "../cli/program.js";

// No top-level await: the bundle (scripts/bundle.mjs) is CommonJS.
async function main(): Promise<void> {
  const code = await runCli(process.argv, processDeps());
  process.exitCode = code;
  // End the process explicitly once stdout and stderr have drained: a handle left open (a process manager's IPC
  // channel, a socket) must not keep a failed start "online" (docs/daemon.md, "Start order and exit").
  await Promise.all([process.stdout, process.stderr].map((s) => new Promise((done) => s.write("", done))));
  process.exit(code);
}

void main();
