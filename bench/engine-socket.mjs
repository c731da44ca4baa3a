// A trading engine for the connection-guard row of the cancel benchmark (bench/cancel.mjs): it connects to the
// daemon's guard socket (a Unix socket path, or HOST:PORT on loopback), writes the protocol's first line
// `hl-deadman-guard/1 <account>`, then a heartbeat line every HEARTBEAT_MS, and holds the connection until it is
// killed. Usage: node bench/engine-socket.mjs <path|host:port> <account> [heartbeatMs]. Prints "connected" once the
// first line is written. Retries the connection for 10 s (the daemon may not listen yet).
import net from "node:net";

const [target, account, heartbeat = "50"] = process.argv.slice(2);
if (!target || !account) {
  console.error("usage: node bench/engine-socket.mjs <path|host:port> <account> [heartbeatMs]");
  process.exit(2);
}
const tcp = /^[^/]+:\d+$/.exec(target);
const deadline = Date.now() + 10_000;

function connect() {
  const socket = tcp
    ? net.connect({ host: target.slice(0, target.lastIndexOf(":")), port: Number(target.split(":").pop()) })
    : net.connect(target);
  socket.once("connect", () => {
    socket.write(`hl-deadman-guard/1 ${account}\n`);
    setInterval(() => socket.write("hb\n"), Number(heartbeat));
    process.stdout.write("connected\n");
  });
  socket.once("error", (error) => {
    if (Date.now() > deadline) {
      console.error(`cannot connect to ${target}: ${error.message}`);
      process.exit(1);
    }
    socket.destroy();
    setTimeout(connect, 50);
  });
  socket.once("close", (hadError) => {
    if (!hadError) process.exit(0);
  });
}
connect();
