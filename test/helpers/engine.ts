import { connect, type Socket } from "node:net";

/** A fake engine: connects to the guard socket, names the account it trades, resolves on the daemon's `ok`. */
export function connectEngine(socketPath: string, account: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(socketPath);
    s.setEncoding("utf8");
    s.once("error", reject);
    s.on("data", (d: string) => {
      if (d.startsWith("ok")) resolve(s);
      else reject(new Error(`guard answered ${d}`));
    });
    s.on("connect", () => s.write(`hl-deadman-guard/1 ${account}\n`));
  });
}
