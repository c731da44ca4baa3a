// The engines of a whole host, in ONE process (bench/host-death.mjs): for the connection guard, connections to the
// daemon's guard socket, each naming up to PER accounts in its first line (`hl-deadman-guard/1 a,b,...`), a
// heartbeat line every second; for the file guard, one file touched every 50 ms. Prints "up" once every
// connection was answered `ok` (or the file was first touched); a refusal is printed ("refused <reason>") and the
// process exits 1. Killed with SIGKILL, every connection closes at once: the host's death.
// Usage: node bench/fleet-engines.mjs socket <path> <per> <account,...> | file <path>
import { utimesSync, writeFileSync } from "node:fs";
import net from "node:net";

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
  for (const g of groups) {
    const socket = net.connect(target);
    let buffered = "";
    socket.on("connect", () => socket.write(`hl-deadman-guard/1 ${g.join(",")}\n`));
    socket.on("data", (d) => {
      buffered += d;
      let i = buffered.indexOf("\n");
      while (i >= 0) {
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
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
}
