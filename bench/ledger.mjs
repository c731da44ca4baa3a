// The ledger's write cost per push (issue 41): what one confirmed push costs the trigger ledger on disk, at 1, 100
// and 1,000 accounts. The store is the package's own (`Ledger` from dist/index.js), opened on a temporary state
// directory on the same disk as the repository, each account holding a realistic entry (a full history of
// notable events, a few counted triggers). One push = `put` of the account's entry with a new deadline, then
// `durable` (what the switch's write-ahead waits for). Accounts are pushed in turn, one at a time, so every
// figure is one push's write, never a batch.
//
// Per row: the wall time of a push's durable write (median and p90 over the pushes, µs) and the bytes the process
// wrote per push (`wchar` of /proc/self/io: every byte handed to write(2), on any thread).
//
// References measured in the same run, on the same disk:
// - the floor: one atomic write of a 1 KiB file (temp file, write, fsync, close, rename, fsync of the directory),
//   the least a durable write can cost here;
// - the previous store's cost ("whole file"): the same atomic write of the whole ledger as the store before issue
//   41 wrote it on every push (`JSON.stringify` of every account, 2-space indented), at each row's size. That is
//   the old store's write path step for step (src/switch/ledger.ts before the per-account layout), so its figures
//   are the before beside the after.
import {
  closeSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

export const LEDGER_ROWS = [1, 100, 1_000];
const PUSHES = 300;
const DAY_MS = 86_400_000;

const silent = {
  level: "silent",
  info() {},
  warn() {},
  error() {},
  debug() {},
  trace() {},
  fatal() {},
  child() {
    return silent;
  },
};

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
const fmt = (x, d = 0) => x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });

function wchar() {
  const io = readFileSync("/proc/self/io", "utf8");
  return Number(/^wchar:\s*(\d+)/m.exec(io)?.[1] ?? Number.NaN);
}

/** A fleet account's entry as a busy day leaves it: a full history, three counted triggers. */
function entryOf(account, now, historySize) {
  const day = new Date(now).toISOString().slice(0, 10);
  const history = Array.from({ length: historySize }, (_, i) => ({
    at: now - (historySize - i) * 60_000,
    type: "trigger",
    deadline: now - (historySize - i) * 60_000,
    triggersToday: 1 + (i % 3),
  }));
  const triggers = [1, 2, 3].map((k) => ({
    deadline: now - k * 600_000,
    proof: "record",
    at: now - k * 600_000,
  }));
  return {
    account,
    day,
    triggersToday: 3,
    limit: 10,
    assumed: false,
    armedUntil: now + 60_000,
    lastPushAt: now,
    pendingUntil: null,
    pendingLatest: null,
    lastCountedDeadline: now - 600_000,
    history,
    triggers,
    limitRefusedAt: null,
    removals: [],
  };
}

const accountOf = (i) => `0x${(i + 1).toString(16).padStart(40, "0")}`;

/** The floor, and the previous store's write: temp, write, fsync, close, rename, fsync of the directory. */
function atomicWrite(dir, dirFd, text, seq) {
  const tmp = path.join(dir, `.bench.tmp-${seq}`);
  const fd = openSync(tmp, "w", 0o600);
  const bytes = Buffer.from(text, "utf8");
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, path.join(dir, "ledger.json"));
  fsyncSync(dirFd);
}

function measureSync(pushes, fn) {
  const times = [];
  const w0 = wchar();
  for (let i = 0; i < pushes; i++) {
    const t0 = performance.now();
    fn(i);
    times.push((performance.now() - t0) * 1000);
  }
  const bytes = (wchar() - w0) / pushes;
  times.sort((a, b) => a - b);
  return { p50Us: quantile(times, 0.5), p90Us: quantile(times, 0.9), bytesPerPush: bytes };
}

export async function benchLedger({ root, log = () => {} }) {
  const { Ledger } = await import(pathToFileURL(path.join(root, "dist/index.js")).href);
  const base = mkdtempSync(path.join(root, ".bench-ledger-"));
  const now = Date.UTC(2026, 0, 15, 12);
  const clock = { now: () => now + (performance.now() % DAY_MS) / 1e6 };
  const rows = [];
  let floor;
  try {
    // the floor: a 1 KiB file, atomically
    const floorDir = mkdtempSync(path.join(base, "floor-"));
    const floorFd = openSync(floorDir, "r");
    const kib = `${"x".repeat(1023)}\n`;
    floor = measureSync(PUSHES, (i) => atomicWrite(floorDir, floorFd, kib, i));
    closeSync(floorFd);
    log(`ledger: floor ${fmt(floor.p50Us)} µs`);
    for (const n of LEDGER_ROWS) {
      const dir = mkdtempSync(path.join(base, `n${n}-`));
      const ledger = await Ledger.open({ stateDir: dir, clock, logger: silent, triggerLimit: 10 });
      const entries = Array.from({ length: n }, (_, i) => entryOf(accountOf(i), now, ledger.historySize));
      for (const e of entries) ledger.put(e);
      await ledger.flush();
      const times = [];
      const w0 = wchar();
      for (let i = 0; i < PUSHES; i++) {
        const e = entries[i % n];
        const next = { ...e, armedUntil: e.armedUntil + 15_000 + i, lastPushAt: now + i };
        entries[i % n] = next;
        const t0 = performance.now();
        ledger.put(next);
        const d = await ledger.durable(60_000);
        times.push((performance.now() - t0) * 1000);
        if (d !== "written") throw new Error(`ledger write ${d} at ${n} accounts`);
      }
      const bytesPerPush = (wchar() - w0) / PUSHES;
      await ledger.close();
      times.sort((a, b) => a - b);
      // before: the whole file rewritten per push, as the previous store did
      const oldDir = mkdtempSync(path.join(base, `old${n}-`));
      const oldFd = openSync(oldDir, "r");
      const accounts = Object.fromEntries(entries.map((e) => [e.account, e]));
      const file = {
        version: 1,
        updatedAt: now,
        lastNonce: null,
        assumeLimitOn: null,
        accounts,
        engines: {},
      };
      const before = measureSync(PUSHES, (i) => {
        const a = entries[i % n].account;
        accounts[a] = { ...accounts[a], armedUntil: accounts[a].armedUntil + 15_000 };
        file.updatedAt = now + i;
        atomicWrite(oldDir, oldFd, `${JSON.stringify(file, null, 2)}\n`, i);
      });
      closeSync(oldFd);
      const row = {
        accounts: n,
        pushes: PUSHES,
        p50Us: quantile(times, 0.5),
        p90Us: quantile(times, 0.9),
        bytesPerPush,
        before,
      };
      log(
        `ledger: ${n} accounts: ${fmt(row.p50Us)} µs, ${fmt(bytesPerPush)} B per push (whole file: ${fmt(before.p50Us)} µs, ${fmt(before.bytesPerPush)} B)`,
      );
      rows.push(row);
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  const at1 = rows.find((r) => r.accounts === 1);
  const at1000 = rows.find((r) => r.accounts === 1_000);
  const cpus = os.cpus();
  const machine = `${cpus[0]?.model ?? "unknown CPU"}, ${cpus.length} cores, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB, ${os.type()} ${os.release()}, Node ${process.version}; load average at the end ${os
    .loadavg()
    .map((x) => fmt(x, 2))
    .join(" / ")}`;
  return { machine, floor, rows, ratio1000to1: at1000 && at1 ? at1000.p50Us / at1.p50Us : Number.NaN };
}

export function renderLedger(r) {
  const L = ["", "## The ledger's write per push", ""];
  if (!r?.ok) {
    L.push(`Not measured: ${r?.error ?? "not run"}.`);
    return L.join("\n");
  }
  L.push(
    "What one confirmed push costs the trigger ledger on disk (`bench/ledger.mjs`): the package's `Ledger` on a",
    "temporary state directory on this machine's disk, every account holding a busy day's entry (a full history, three",
    "counted triggers); one push = `put` of the account's entry with a new deadline, then `durable` (what the",
    "write-ahead waits for), accounts in turn, one push at a time. Bytes: `wchar` of /proc/self/io per push (all that",
    "went to write(2)). **Before**: the store before issue 41 rewrote the whole `ledger.json` on every push; its write",
    "path (JSON of every account, temp file, fsync, rename, fsync of the directory) measured step for step in the same",
    "run. **After**: one file per account (`ledger/<account>.json`), so a push writes its own account's file only.",
    "",
    `Machine: ${r.machine}.`,
    "",
    `Reference, same run and disk: one atomic write of a 1 KiB file (temp, fsync, rename, fsync of the directory): p50 ${fmt(r.floor.p50Us)} µs, p90 ${fmt(r.floor.p90Us)} µs.`,
    "",
    "| Accounts | pushes | before: p50 µs | before: p90 µs | before: bytes per push | after: p50 µs | after: p90 µs | after: bytes per push |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const row of r.rows)
    L.push(
      `| ${fmt(row.accounts)} | ${row.pushes} | ${fmt(row.before.p50Us)} | ${fmt(row.before.p90Us)} | ${fmt(row.before.bytesPerPush)} | ${fmt(row.p50Us)} | ${fmt(row.p90Us)} | ${fmt(row.bytesPerPush)} |`,
    );
  L.push(
    "",
    `At 1,000 accounts a push costs ${fmt(r.ratio1000to1, 2)}× what it costs at 1 (p50; goal: within 2×).`,
    "",
  );
  return L.join("\n");
}
