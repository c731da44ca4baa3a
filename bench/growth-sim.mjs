// The simulator for the growth curve (bench/growth.mjs), in its own process so that its work (a signature
// recovered per push) is not the daemon's. Usage: node bench/growth-sim.mjs '<options JSON>' OUT.json
// Prints one JSON line {"apiUrl","pid"} once listening; on SIGTERM writes what reached /exchange (the time each
// request was received by the simulator's wall clock, its account, accepted or not) to OUT.json, then exits.
import { writeFileSync } from "node:fs";
import { startSimulator } from "../dist/sim/server.js";

const options = JSON.parse(process.argv[2] ?? "{}");
const out = process.argv[3];
// a request answered 429 is heard as received but never as answered (it never reaches the handler)
const heard = { received: 0, answered: 0 };
const sim = await startSimulator({
  ...options,
  onRequest: (e) => {
    if (e.endpoint === "exchange") heard[e.phase]++;
  },
});
process.stdout.write(`${JSON.stringify({ apiUrl: sim.apiUrl, pid: process.pid })}\n`);

let closing = false;
const stop = async () => {
  if (closing) return;
  closing = true;
  const actions = sim.state.actions.map((a) => ({
    at: a.receivedAt,
    account: a.vaultAddress ?? a.user,
    accepted: a.accepted,
    type: a.action?.type ?? null,
  }));
  writeFileSync(out, JSON.stringify({ actions, limited: heard.received - heard.answered }));
  await sim.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
