// The simulator in its own process for the benchmark, so its CPU time and resident memory can be read from
// /proc/<pid> without the load generator's work mixed in. Usage: node bench/sim-server.mjs '<options JSON>'.
// Prints one JSON line {"apiUrl","rpcUrl","bigBlock","pid"} once listening, then runs until SIGTERM/SIGINT.
import { startSimulator } from "../dist/sim/server.js";

const options = JSON.parse(process.argv[2] ?? "{}");
const sim = await startSimulator(options);
let bigBlock = null;
try {
  bigBlock = sim.chain?.bigBlock ?? null;
} catch {
  bigBlock = null;
}
process.stdout.write(
  `${JSON.stringify({ apiUrl: sim.apiUrl, rpcUrl: sim.rpcUrl, bigBlock, pid: process.pid })}\n`,
);

let closing = false;
const stop = async () => {
  if (closing) return;
  closing = true;
  await sim.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
