// The simulator for the kill and host-death sections (bench/kill.mjs, bench/host-death.mjs), in its own process so
// its work is not the daemon's and the bench's own questions spend none of the IP's weight: the bench asks over
// this process's stdin (one JSON line a question, one JSON line an answer on stdout), never over /info.
// Usage: node bench/fleet-sim.mjs '<options JSON>'. First stdout line: {"apiUrl","pid"}. Questions:
//   {"op":"place","accounts":[...],"orders":[...]}  the orders rest on each account (the simulator's admin path)
//   {"op":"open","accounts":[...]}                  each account's open orders: {oid, stop, asset, trigger, reduceOnly}
//                                                   (stop: a reduce-only trigger; asset: its index on the first dex)
//   {"op":"ended","accounts":[...],"since":ms}      orders ended since `since` (wall ms): {account, oid, status, at}
//   {"op":"counters","accounts":[...]}              weight spent on /exchange and /info as the simulator prices it,
//                                                   429 answers, triggers today per account
import { createInterface } from "node:readline";
import { infoWeight } from "../dist/sim/info.js";
import { startSimulator } from "../dist/sim/server.js";

const options = JSON.parse(process.argv[2] ?? "{}");
// a request answered 429 is heard as received but never as answered (it never reaches the handler); the weight is
// counted for answered requests only, as the simulator's limiter counts it (exchange 1, info by type)
const counters = { received: 0, answered: 0, weight: 0, byType: {} };
const sim = await startSimulator({
  ...options,
  onRequest: (e) => {
    counters[e.phase]++;
    if (e.phase !== "answered") return;
    const w = e.endpoint === "exchange" ? 1 : infoWeight({ type: e.type });
    counters.weight += w;
    const k = `${e.endpoint}:${e.type}`;
    counters.byType[k] = (counters.byType[k] ?? 0) + w;
  },
});
const store = sim.state;
process.stdout.write(`${JSON.stringify({ apiUrl: sim.apiUrl, pid: process.pid })}\n`);

const answer = (q) => {
  switch (q.op) {
    case "place":
      for (const a of q.accounts) for (const o of q.orders) store.addOrder(a, o);
      return { ok: true };
    case "open":
      return Object.fromEntries(
        q.accounts.map((a) => [
          a,
          (store.account(a)?.orders ?? []).map((o) => ({
            oid: o.oid,
            stop: !!(o.reduceOnly && o.isTrigger),
            asset: store.universe.indexOf(o.coin),
            trigger: !!o.isTrigger,
            reduceOnly: !!o.reduceOnly,
          })),
        ]),
      );
    case "ended":
      return q.accounts.flatMap((a) =>
        store
          .getHistoricalOrders(a)
          .filter((h) => h.statusTimestamp >= q.since)
          .map((h) => ({ account: a, oid: h.order.oid, status: h.status, at: h.statusTimestamp })),
      );
    case "counters": {
      const day = new Date().toISOString().slice(0, 10);
      const triggers = Object.fromEntries((q.accounts ?? []).map((a) => [a, store.triggersOn(a, day)]));
      return { ...counters, limited: counters.received - counters.answered, triggers };
    }
    default:
      return { error: `unknown op ${q.op}` };
  }
};
createInterface({ input: process.stdin }).on("line", (line) => {
  let out;
  try {
    out = answer(JSON.parse(line));
  } catch (error) {
    out = { error: String(error?.message ?? error) };
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
});

let closing = false;
const stop = async () => {
  if (closing) return;
  closing = true;
  await sim.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
