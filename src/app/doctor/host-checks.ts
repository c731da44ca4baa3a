/**
 * `doctor`'s checks of the host (docs/cli.md, "doctor"): the IP's weight the configuration spends, the local clock
 * against the exchange's (the switch's model of the exchange's time), the state directory and its lock, the health
 * port and the engine guard.
 */
import { closeSync, constants, lstatSync, openSync, statfsSync, statSync, unlinkSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { parseGuardSocket, parseListenAddress } from "../../config/listen.js";
import type { Config } from "../../config/schema.js";
import { deathRoom, describeDeathRoom, describeWeightPlan, weightPlan } from "../../config/weight.js";
import type { Clock } from "../../core/clock.js";
import { formatDuration } from "../../core/duration.js";
import { ExitCode } from "../../core/exit-codes.js";
import { redactUrl } from "../../core/redact.js";
import { createRuntime, systemTimers } from "../../core/runtime.js";
import { initialTime, takeSample, timesAt } from "../../switch/exchange-time.js";
import { createGuard } from "../../watchers/guard.js";
import { sampleSkew } from "../../watchers/skew.js";
import { inspectStateLock, type LockView } from "../lock.js";
import { type CheckResult, exchangeCode, fail, ok, reasonOf, warn } from "./report.js";

/** Below this much free space in the state directory the ledger may not be written: fail; below WARN, warn. */
export const STATE_FREE_FAIL_BYTES = 1024 * 1024;
export const STATE_FREE_WARN_BYTES = 64 * 1024 * 1024;

/** The IP's weight the configuration spends a minute (the same arithmetic the daemon refuses a start on). */
export function checkWeight(config: Config, accounts: number): CheckResult {
  const plan = weightPlan(config, Math.max(1, accounts));
  const text = describeWeightPlan(plan).split("\n").at(-1)!.trim();
  // the room for a death of every guarded engine at once: a configuration that ran before this version starts
  // without it (loudly), and doctor fails it until it is changed
  const room = deathRoom(config, Math.max(1, accounts));
  if (plan.fits && room !== null && !room.fits)
    return fail(
      "weight",
      null,
      `${accounts} account(s): ${text}; but no room for a death of every guarded engine at once:\n${describeDeathRoom(room)}`,
      "lengthen the interval or the deadline, or split the accounts over IPs",
      ExitCode.config,
    );
  if (plan.fits)
    return ok(
      "weight",
      null,
      `${accounts} account(s): ${text}${room ? `; ${room.reserve} weight kept for a death of every guarded engine` : ""}`,
    );
  return fail(
    "weight",
    null,
    `${accounts} account(s): ${text}`,
    plan.fittingIntervalMs === null
      ? "lengthen exposureInterval or budgetInterval, or split the accounts over IPs"
      : `--interval ${plan.fittingIntervalMs / 1000}s or more, or split the accounts over IPs`,
    ExitCode.config,
  );
}

/**
 * The exchange's time from one answer's Date, judged by the switch's own model (src/switch/exchange-time.ts): a
 * Date refused as implausible, or a disagreement with the local clock that makes the switch `suspect` (readiness
 * fails), fails; one beyond clockSkewWarn warns.
 */
export function checkClock(
  sample: { date: number | undefined; sentAt: number; receivedAt: number } | null,
  warnMs: number,
  error?: unknown,
): CheckResult {
  if (!sample)
    return fail(
      "clock",
      null,
      `no answer to read the time from: ${reasonOf(error)}`,
      "check --api-url",
      exchangeCode(error),
    );
  if (sample.date === undefined)
    return warn(
      "clock",
      null,
      "the exchange's answer carried no Date header: the skew cannot be measured",
      "",
    );
  // One sample on the local clock's scale: the model's monotonic axis is the wall clock here (a one-shot).
  const model = initialTime(sample.sentAt, sample.sentAt, null);
  const { time, verdict } = takeSample(
    model,
    { date: sample.date, sentMono: sample.sentAt, receivedMono: sample.receivedAt },
    sample.receivedAt,
  );
  // The figure people read: the skew estimate of the clock watch (src/watchers/skew.ts), ± its uncertainty.
  const est = sampleSkew({ sentAt: sample.sentAt, receivedAt: sample.receivedAt, serverDate: sample.date });
  const skew = Math.round(est?.skewMs ?? sample.receivedAt - sample.date);
  const said = `the local clock is ${formatDuration(Math.abs(skew))} ${skew >= 0 ? "ahead of" : "behind"} the exchange's Date (± ${formatDuration(Math.round(est?.uncertaintyMs ?? 1000))})`;
  if (verdict.kind === "refused")
    return fail(
      "clock",
      null,
      `${said}: the Date was refused (${verdict.detail}); readiness would fail (/readyz 503) while the local clock is this far off`,
      "fix the host's time sync (chrony/NTP), or the proxy in front of the exchange",
      ExitCode.runtime,
    );
  const t = timesAt(time, sample.receivedAt, sample.receivedAt);
  if (t.suspect)
    return fail(
      "clock",
      null,
      `${said}: beyond the clock.suspect limit (5 s): readiness would fail (/readyz 503) while the daemon runs on this host`,
      "fix the host's time sync (chrony/NTP), or the proxy in front of the exchange",
      ExitCode.runtime,
    );
  if (t.disagreementMs > warnMs)
    return warn(
      "clock",
      null,
      said,
      `fix the host's time sync (above clockSkewWarn ${formatDuration(warnMs)})`,
    );
  return ok("clock", null, said);
}

/** The state directory: its owner, its mode, that a file can be created in it, and its free space. */
export function checkStateDir(dir: string, uid: number | undefined): CheckResult {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      return fail(
        "state-dir",
        null,
        `${dir}: ${(error as Error).message}`,
        "fix the path or its parent's permissions",
        ExitCode.cantCreat,
      );
    // `run` creates it (mode 0700): its nearest existing parent must let us.
    let parent = dirname(dir);
    while (parent !== dirname(parent)) {
      try {
        statSync(parent);
        break;
      } catch {
        parent = dirname(parent);
      }
    }
    return writable(parent)
      ? ok("state-dir", null, `${dir} does not exist yet: run creates it (mode 0700) in ${parent}`)
      : fail(
          "state-dir",
          null,
          `${dir} does not exist and ${parent} is not writable`,
          `create it: install -d -m 700 ${dir}`,
          ExitCode.cantCreat,
        );
  }
  if (!st.isDirectory())
    return fail(
      "state-dir",
      null,
      `${dir} is not a directory`,
      "give --state-dir a directory",
      ExitCode.cantCreat,
    );
  if (uid !== undefined && st.uid !== uid)
    return fail(
      "state-dir",
      null,
      `${dir} is owned by uid ${st.uid}, not by this user (uid ${uid})`,
      `chown it to the daemon's user, or run as uid ${st.uid}`,
      ExitCode.cantCreat,
    );
  if (!writable(dir))
    return fail(
      "state-dir",
      null,
      `no file can be created in ${dir}: the ledger and the lock cannot be written`,
      `chmod 700 ${dir} (and check a read-only mount)`,
      ExitCode.cantCreat,
    );
  let free: number | null = null;
  try {
    const fs = statfsSync(dir);
    free = Number(fs.bavail) * Number(fs.bsize);
  } catch {}
  const mode = (Number(st.mode) & 0o777).toString(8).padStart(4, "0");
  if (free !== null && free < STATE_FREE_FAIL_BYTES)
    return fail(
      "state-dir",
      null,
      `${dir} has ${free} bytes free: the ledger cannot be written`,
      "free space on its file system",
      ExitCode.cantCreat,
    );
  const said = `${dir}: ours, mode ${mode}, writable${free === null ? "" : `, ${Math.floor(free / 1024 / 1024)} MiB free`}`;
  if (free !== null && free < STATE_FREE_WARN_BYTES)
    return warn("state-dir", null, said, "free space on its file system");
  if ((Number(st.mode) & 0o022) !== 0)
    return fail(
      "state-dir",
      null,
      `${dir} is writable by its group or others (mode ${mode}): run refuses it (exit 73)`,
      `chmod 700 ${dir}`,
      ExitCode.cantCreat,
    );
  if ((Number(st.mode) & 0o077) !== 0)
    return warn(
      "state-dir",
      null,
      said,
      `chmod 700 ${dir}: the ledger and the audit trail are the daemon's alone`,
    );
  return ok("state-dir", null, said);
}

/** Whether a file can be created (and removed) in `dir`: the only honest test of a writable directory. */
function writable(dir: string): boolean {
  const probe = join(dir, `.hl-deadman-doctor-${process.pid}`);
  try {
    closeSync(openSync(probe, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
    unlinkSync(probe);
    return true;
  } catch {
    return false;
  }
}

/** The state directory's lock: free, stale (taken over at start), or held by a running daemon, which it names. */
export function checkLock(view: LockView): CheckResult {
  switch (view.state) {
    case "free":
      return ok("lock", null, `${view.path} is free`);
    case "stale":
      return ok(
        "lock",
        null,
        `${view.path} is stale${view.holder ? ` (pid ${view.holder.pid} is gone)` : ""}: run takes it over`,
      );
    case "foreign":
      return fail(
        "lock",
        null,
        view.message,
        `remove it when no hl-deadman runs: rm ${view.path}`,
        ExitCode.config,
      );
    case "held":
      return fail(
        "lock",
        null,
        `held by a running hl-deadman, pid ${view.holder.pid}${view.holder.host ? ` on ${view.holder.host}` : ""}${view.holder.at ? ` (since ${view.holder.at})` : ""}: a second run on this state directory exits 75`,
        "stop it first, or give this one its own --state-dir",
        ExitCode.tempFail,
      );
  }
}

/** Reads the lock without taking it (src/app/lock.ts). */
export function lockView(stateDir: string, now: number): LockView {
  return inspectStateLock(stateDir, now);
}

/** Whether `host:port` can be bound now (what the health server will do at start). */
export function canListen(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (error) => resolve(error as NodeJS.ErrnoException));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/** The health and metrics port: free (run binds it), or taken (run exits 69; by the lock's holder, when held). */
export async function checkHealth(health: string, lock: LockView): Promise<CheckResult> {
  const address = parseListenAddress(health);
  if (address === null)
    return warn(
      "health",
      null,
      "health is off: no /readyz for the engine or orchestrator, no metrics",
      "set --health 127.0.0.1:9464",
    );
  if (address.port === 0) return ok("health", null, `${health}: any free port`);
  const error = await canListen(address.host, address.port);
  if (!error) return ok("health", null, `${address.host}:${address.port} is free`);
  const holder =
    lock.state === "held" ? ` (the lock's holder, pid ${lock.holder.pid}, is probably listening there)` : "";
  return fail(
    "health",
    null,
    `cannot listen on ${address.host}:${address.port} (${error.code ?? error.message})${holder}: run would exit 69`,
    "free the port or choose --health HOST:PORT (or off)",
    ExitCode.unavailable,
  );
}

/** The engine guard: configured, and the engine alive by it (file fresh, URL answering, socket free to listen on). */
export async function checkGuard(config: Config, clock: Clock): Promise<CheckResult> {
  if (config.guardSocket) {
    const address = parseGuardSocket(config.guardSocket);
    if (address.kind === "tcp") {
      const error = await canListen(address.host, address.port);
      return error
        ? fail(
            "guard",
            null,
            `guard socket ${config.guardSocket} cannot be listened on (${error.code ?? error.message})`,
            "free it or choose another --guard-socket",
            ExitCode.unavailable,
          )
        : ok(
            "guard",
            null,
            `guard socket ${config.guardSocket} is free: the engine connects once run listens`,
          );
    }
    const existing = (() => {
      try {
        return lstatSync(address.path);
      } catch {
        return null;
      }
    })();
    if (existing && !existing.isSocket())
      return fail(
        "guard",
        null,
        `guard socket ${address.path} exists and is not a socket`,
        "remove it or choose another path",
        ExitCode.config,
      );
    if (!writable(dirname(address.path)))
      return fail(
        "guard",
        null,
        `no socket can be made in ${dirname(address.path)}`,
        `create it for the daemon's user: install -d -m 750 ${dirname(address.path)}`,
        ExitCode.config,
      );
    return ok("guard", null, `guard socket ${address.path}: the engine connects once run listens`);
  }
  if (!config.guardFile && !config.guardUrl)
    return warn(
      "guard",
      null,
      "no engine guard: a dead or hung engine is not seen, the pushes go on while the daemon lives",
      "set --guard-socket, --guard-url or --guard-file (docs/daemon.md, Engine guard)",
    );
  const runtime = createRuntime({ clock, timers: systemTimers() });
  const guard = createGuard({
    file: config.guardFile,
    url: config.guardUrl,
    maxAgeMs: config.guardMaxAge,
    intervalMs: config.guardInterval,
    runtime,
    onChange: () => {},
  });
  try {
    const up = await guard!.check();
    const what = config.guardFile
      ? `guard file ${config.guardFile}`
      : `guard URL ${redactUrl(config.guardUrl!)}`;
    const status = guard!.status();
    return up
      ? ok("guard", null, `${what}: the engine is alive`)
      : fail(
          "guard",
          null,
          `${what}: the engine is not alive${status.detail ? ` (${status.detail})` : ""}`,
          "start the engine (or fix the guard's path/URL) before going live",
          ExitCode.unavailable,
        );
  } finally {
    guard!.stop();
    runtime.abort("doctor");
  }
}
