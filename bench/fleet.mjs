// Helpers shared by the kill and host-death sections: the simulator of bench/fleet-sim.mjs asked over its stdin, a
// fleet of throwaway signers with subaccounts, percentiles.
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** The nearest-rank percentile (p in 0..100) of xs. */
export const pct = (xs, p) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
export const f0 = (n) => (n == null || Number.isNaN(n) ? "n/a" : Math.round(n).toLocaleString("en-US"));

export function waitExit(child, ms) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      return resolve({ code: child.exitCode, signal: child.signalCode });
    const t = setTimeout(() => child.kill("SIGKILL"), ms);
    child.once("exit", (code, signal) => {
      clearTimeout(t);
      resolve({ code, signal });
    });
  });
}

/** Starts bench/fleet-sim.mjs; `ask(question)` resolves with its one-line answer (questions are answered in order). */
export async function startFleetSim(root, options) {
  const child = spawn(process.execPath, [path.join(root, "bench/fleet-sim.mjs"), JSON.stringify(options)], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: "" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  let first;
  const ready = new Promise((resolve, reject) => {
    first = resolve;
    child.once("exit", (code) => reject(new Error(`the simulator exited (${code})`)));
  });
  lines.on("line", (line) => {
    if (first) {
      const f = first;
      first = null;
      f(JSON.parse(line));
      return;
    }
    waiting.shift()?.(JSON.parse(line));
  });
  const { apiUrl } = await ready;
  return {
    apiUrl,
    pid: child.pid,
    ask: (q) =>
      new Promise((resolve, reject) => {
        waiting.push((a) => (a?.error ? reject(new Error(a.error)) : resolve(a)));
        child.stdin.write(`${JSON.stringify(q)}\n`);
      }),
    close: async () => {
      child.kill("SIGTERM");
      await waitExit(child, 5_000);
    },
  };
}

/**
 * Throwaway signers (fixed keys, for the simulator on 127.0.0.1 only), each a master and up to perSigner - 1
 * subaccounts; `accounts` in the plan's order (each signer's own address, then its subaccounts).
 */
export async function fleetOf(label, count, perSigner = 100) {
  const { Wallet, id } = await import("ethers");
  const signers = [];
  for (let j = 0; j * perSigner < count; j++) {
    const wallet = new Wallet(id(`hl-deadman bench ${label}: signer ${j}`));
    const n = Math.min(perSigner, count - j * perSigner);
    const vaults = Array.from({ length: n - 1 }, (_, k) =>
      id(`hl-deadman bench ${label}: sub ${j} ${k}`).slice(0, 42),
    );
    signers.push({ name: `s${j}`, wallet, address: wallet.address.toLowerCase(), vaults });
  }
  const accounts = signers.flatMap((s) => [s.address, ...s.vaults]);
  const env = {};
  for (const [j, s] of signers.entries()) env[`HL_BENCH_KEY_${j}`] = s.wallet.privateKey;
  return {
    signers,
    accounts,
    env,
    users: signers.map((s) => ({ address: s.address, vaults: s.vaults, volumeUsd: 5_000_000 })),
    config: (extra) => ({
      ...extra,
      signers: signers.map((s, j) => ({
        name: s.name,
        keyEnv: `HL_BENCH_KEY_${j}`,
        account: s.address,
        vaults: s.vaults,
      })),
    }),
  };
}

/** The orders each account holds before a kill or a death: three resting orders and a reduce-only stop. */
export const RESTING = [
  { coin: "BTC", side: "B", limitPx: "50000", sz: "0.01" },
  { coin: "ETH", side: "A", limitPx: "5000", sz: "0.5" },
  { coin: "SOL", side: "B", limitPx: "100", sz: "1" },
];
export const STOP = {
  coin: "BTC",
  side: "A",
  limitPx: "40000",
  sz: "0.01",
  reduceOnly: true,
  orderType: "Stop Market",
  triggerPx: "40000",
};

/** The machine line a section carries, so that a section refreshed alone says where and when it was measured. */
export async function machineLine() {
  const os = await import("node:os");
  const cpus = os.cpus();
  const load = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" / ");
  return `Measured ${new Date().toISOString()} on ${cpus[0]?.model?.trim() ?? "unknown"}, ${cpus.length} cores (shared with other work), Node.js ${process.version}; load average at the start ${load}.`;
}
