/**
 * The pushes and the protection: each push's answer, NOT PROTECTED and its end, and the account's gauges.
 * Rows of the switch's one table (./index.ts `PUBLISH`).
 */
import { iso, line, type Rows } from "./line.js";

type Types =
  | "pushConfirmed"
  | "pushFailed"
  | "recovered"
  | "notProtected"
  | "agentInvalid"
  | "protected"
  | "notProtectedGauge"
  | "gauge";

export const PUSH_ROWS: Rows<Types> = {
  pushConfirmed: {
    log: (e) =>
      e.expedited
        ? line(
            "warn",
            "heartbeat.ok",
            { deadline: e.deadline, latencyMs: e.latencyMs, expedited: true },
            `engine down: the cancel is now scheduled at ${iso(e.deadline)} (5 s minimum)`,
          )
        : line(
            "info",
            "heartbeat.ok",
            { deadline: e.deadline, latencyMs: e.latencyMs },
            `armed until ${iso(e.deadline)}`,
          ),
    metrics: (m, account, e) => {
      m.pushes.inc({ account, outcome: "ok" });
      m.pushLatency.observe({ account }, e.latencyMs / 1000);
    },
  },
  pushFailed: {
    log: (e) => {
      const base = { reason: e.reason, message: e.message, consecutiveFailures: e.consecutiveFailures };
      return e.refused
        ? line("warn", "heartbeat.failed", base, `push refused: ${e.message}`)
        : line(
            "warn",
            "heartbeat.failed",
            { ...base, retryInMs: e.retryInMs ?? null, armedUntil: e.armedUntil ?? null },
            `push failed (${e.reason}): ${e.message}`,
          );
    },
    metrics: (m, account, e) => m.pushes.inc({ account, outcome: e.reason }),
  },
  recovered: {
    log: (e) =>
      line(
        "info",
        "heartbeat.recovered",
        { outageMs: e.outageMs },
        `pushes succeed again after ${e.outageMs} ms of failures`,
      ),
  },
  notProtected: {
    log: (e) =>
      line(
        "error",
        "switch.not_protected",
        { reason: e.reason, message: e.message, recheckInMs: e.recheckInMs },
        `NOT PROTECTED: the exchange refuses the switch for this account (${e.reason}); rechecking every ${Math.round(e.recheckInMs / 1000)} s`,
      ),
  },
  agentInvalid: {
    log: (e) =>
      line(
        "error",
        "switch.not_protected",
        { reason: e.reason, ...(e.message ? { message: e.message } : {}) },
        `NOT PROTECTED: the agent wallet is ${e.state}${e.message ? ` (${e.message})` : ""}; no pushes until it is valid again`,
      ),
  },
  protected: {
    log: (e) =>
      line(
        "info",
        "switch.protected",
        { previousReason: e.previousReason },
        e.by === "agent" ? "the agent wallet is valid again" : "the exchange accepts the switch again",
      ),
  },
  notProtectedGauge: {
    metrics: (m, account, e) => m.notProtected.set({ account, reason: e.reason }, e.value),
  },
  gauge: {
    metrics: (m, account, e) => {
      if (e.name === "armedUntil") m.setArmedUntil(account, e.value);
      else if (e.name === "exhausted") m.exhausted.set({ account }, e.value ? 1 : 0);
      else if (e.name === "halted") m.halted.set({ account }, e.value ? 1 : 0);
      else if (e.name === "proof") m.triggersByProof.set({ account, proof: e.proof }, e.value);
      else m[e.name].set({ account }, e.value as number);
    },
  },
};
