// The engines of a whole host, in ONE process (bench/host-death.mjs): for the connection guard, connections to the
// daemon's guard socket, each naming up to PER accounts in its first line (`hl-deadman-guard/2 a,b,...`), a
// heartbeat line every second; for the file guard, one file touched every 50 ms. Prints "up" once every
// connection was answered `ok` (or the file was first touched); a refusal is printed ("refused <reason>") and the
// process exits 1. Killed with SIGKILL, every connection closes at once: the host's death.
// Each engine announces its accounts' orders (guard protocol 2, `orders` lines, as hl-deadman/engine writes them):
// one JSON line on stdin, {account: [{oid, asset, trigger, reduceOnly}]}, is written to the accounts' connections,
// then "announced" is printed once every line was flushed.
// Usage: node bench/fleet-engines.mjs socket <path> <per> <account,...> | file <path>
import { utimesSync, writeFileSync } from "node:fs";
import net from "node:net";
import { createInterface } from "node:readline";
import { guardOrdersLines } from "../dist/core/guard-protocol.js";

const [mode, target, per, list] = process.argv.slice(2);
if (mode === "file") {
  writeFileSync(target, "");
  const touch = () => {
    const d = new Date();
    utimesSync(target, d, d);
  };
  touch();
  setInterval(touch, 50);
  process.stdout.write("up\n");
} else {
  const accounts = list.split(",");
  const groups = [];
  for (let i = 0; i < accounts.length; i += Number(per)) groups.push(accounts.slice(i, i + Number(per)));
  let ok = 0;
  const socketOf = new Map();
  for (const g of groups) {
    const socket = net.connect(target);
    for (const a of g) socketOf.set(a, socket);
    let buffered = "";
    socket.on("connect", () => socket.write(`hl-deadman-guard/2 ${g.join(",")}\n`));
    socket.on("data", (d) => {
      buffered += d;
      let i = buffered.indexOf("\n");
      while (i >= 0) {
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
        // (version 2: the daemon may also write notices; an engine ignores the ones it does not act on)
        if (line === "ok" && ++ok === groups.length) process.stdout.write("up\n");
        if (line.startsWith("refused")) {
          process.stdout.write(`${line}\n`);
          process.exit(1);
        }
        i = buffered.indexOf("\n");
      }
    });
    socket.on("error", (e) => {
      process.stdout.write(`refused ${e.message}\n`);
      process.exit(1);
    });
    setInterval(() => socket.write("hb\n"), 1000);
  }
  createInterface({ input: process.stdin }).on("line", async (line) => {
    const announced = JSON.parse(line);
    const writes = [];
    for (const [account, orders] of Object.entries(announced)) {
      const socket = socketOf.get(account);
      if (!socket) continue;
      for (const l of guardOrdersLines(account, orders))
        writes.push(new Promise((resolve) => socket.write(l, resolve)));
    }
    await Promise.all(writes);
    process.stdout.write("announced\n");
  });
}
