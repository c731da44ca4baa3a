/**
 * Shared helpers of the reliability suite: spawn the built CLI and read its JSON log lines, check the
 * simulator's record of accepted actions, query /readyz. Loopback only; every wait is bounded.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { id, Wallet } from "ethers";
import type { Clock } from "../../src/core/clock.js";
import type { ReceivedAction } from "../../src/sim/records.js";
import { startSimulator } from "../../src/sim/server.js";
import { FAST_CADENCE, runCliProcess, type SpawnedProcess, spawnCli } from "../helpers/process.js";

// One process helper, one JSON-lines reader and one polling helper for the whole suite (test/helpers/).
export { eventually, sleep } from "../helpers/eventually.js";
export { jsonLineSplitter, type LogLine } from "../helpers/json-lines.js";
export { assertBuilt, CLI, FAST_CADENCE, ROOT, spawnCli } from "../helpers/process.js";
export type DaemonProcess = SpawnedProcess;

/**
 * libfaketime's preload library (Debian's faketime package), which steps a spawned daemon's wall clock while its
 * monotonic clock stays real; the tests that need it fail with the install command when it is missing.
 */
export function libfaketime(): string {
  const found = [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
  ].find((p) => existsSync(p));
  if (!found) throw new Error("libfaketime not found: apt-get install -y faketime");
  return found;
}

/**
 * One simulator, one registered user with open orders (two by default), one key (derived from `seed`) and one
 * state dir, for one process test; `start` spawns `run` against them (health off unless `health`, then on a free
 * port `readyz` asks; FAST_CADENCE unless `cadence`; the simulator's explorer when `explorer`; the simulator on
 * `clock` when given). Everything is closed through `cleanups`, the test file's list.
 */
export async function processSetup(
  seed: string,
  cleanups: Array<() => unknown>,
  {
    volumeUsd,
    explorer = false,
    clock,
    orders = "two",
    health = false,
    cadence = FAST_CADENCE,
  }: {
    volumeUsd?: number;
    explorer?: boolean;
    clock?: Clock;
    orders?: "one" | "two";
    health?: boolean;
    cadence?: readonly string[];
  } = {},
) {
  const wallet = new Wallet(id(seed));
  const user = wallet.address.toLowerCase();
  const sim = await startSimulator({
    ...(clock ? { clock } : {}),
    users: [
      {
        address: user,
        ...(volumeUsd !== undefined ? { volumeUsd } : {}),
        orders: [
          { coin: "BTC", side: "B", limitPx: "50000", sz: "0.01" },
          ...(orders === "two" ? [{ coin: "ETH", side: "A" as const, limitPx: "5000", sz: "0.5" }] : []),
        ],
      },
    ],
  });
  const state = tempDir();
  const port = health ? await freePort() : null;
  cleanups.push(
    () => sim.close(),
    () => state.cleanup(),
  );
  const start = (extra: string[] = [], env: Record<string, string> = {}): DaemonProcess => {
    const p = spawnCli(
      [
        "run",
        "--api-url",
        sim.apiUrl,
        ...(explorer ? ["--explorer-url", sim.explorerUrl] : []),
        "--state-dir",
        state.dir,
        "--health",
        port === null ? "off" : `127.0.0.1:${port}`,
        ...cadence,
        ...extra,
      ],
      { HL_PRIVATE_KEY: wallet.privateKey, ...env },
    );
    cleanups.push(() => p.kill("SIGKILL"));
    return p;
  };
  const readyz = () => getJson(`http://127.0.0.1:${port}/readyz`);
  return { wallet, user, sim, state, start, port, readyz };
}

/** Runs the CLI to completion (bounded) and returns code, stdout, stderr. */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 10_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runCliProcess(args, env, { timeoutMs });
  return { code, stdout, stderr };
}

/** A fresh temporary directory, removed by the returned cleanup (chmod'ed dirs are restored first). */
export function tempDir(prefix = "hl-rel-"): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return {
    dir,
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The core safety property: across every accepted scheduleCancel that set a time, in arrival order, the
 * deadline never moves earlier than the one confirmed before it. A removal (no time) starts a new sequence.
 * Returns the accepted times (for further assertions).
 */
export function assertDeadlinesNeverMoveEarlier(
  actions: ReadonlyArray<ReceivedAction>,
  user: string,
): number[] {
  const times: number[] = [];
  let previous: number | null = null;
  for (const a of actions) {
    if (!a.accepted || a.user !== user) continue;
    const action = a.action as { type?: string; time?: number };
    if (action?.type !== "scheduleCancel") continue;
    if (typeof action.time !== "number") {
      previous = null;
      continue;
    }
    if (previous !== null && action.time < previous) {
      throw new Error(
        `deadline moved earlier for ${user}: accepted time ${action.time} after ${previous} (nonce ${a.nonce}, received ${a.receivedAt})`,
      );
    }
    previous = action.time;
    times.push(action.time);
  }
  return times;
}

/** GET a URL on loopback, returning status and parsed JSON (or text). */
export async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

/**
 * File permissions do not stop root. When the suite runs as root, processes that must feel a chmod run as
 * `nobody` (65534) instead; otherwise as the current user (undefined).
 */
export function unprivilegedUser(): { uid: number; gid: number } | undefined {
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
}

/** A TCP port that was free a moment ago on 127.0.0.1 (never 9464). */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
