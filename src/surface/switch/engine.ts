/**
 * What `engine.down`, `engine.up`, a cancel pass and its retry and fall-back say, per `--on-engine-down` policy:
 * each says what the machine does next (switch/engine-down.ts), nothing more (test/switch/engine-words.test.ts
 * holds them to it). Rows of the switch's one table (./index.ts `PUBLISH`).
 */
import { line, type Of, type Rows } from "./line.js";

type Types = "engineDown" | "engineUp" | "ordersCancelled" | "cancelFailed" | "cancelRetry";

export const ENGINE_ROWS: Rows<Types> = {
  engineDown: {
    log: (e) =>
      line(
        "warn",
        "engine.down",
        { action: e.action, detail: e.detail, armedUntil: e.armedUntil, cause: e.cause ?? "seen" },
        engineDownWords(e),
      ),
  },
  engineUp: {
    log: (e) => line("info", "engine.up", { action: e.action, detail: e.detail }, engineUpWords(e)),
  },
  ordersCancelled: {
    log: (e) =>
      line(
        // Every pass is said; a further one that found nothing to cancel only at debug level (one per interval).
        e.repeat && e.cancelled === 0 ? "debug" : "warn",
        "engine.orders_cancelled",
        { pass: e.pass, cancelled: e.cancelled, kept: e.kept, ...(e.detail ? { detail: e.detail } : {}) },
        `engine down: ${e.cancelled} open order(s) cancelled, ${e.kept} kept (pass ${e.pass}); the schedule keeps being renewed as the backstop (no trigger spent), and open orders are cancelled again each interval while the engine stays down`,
      ),
    metrics: (m, account) => m.cancelPasses.inc({ account, outcome: "confirmed" }),
  },
  cancelFailed: {
    log: ({ type: _, ...f }) => line("error", "engine.cancel_failed", f, cancelFailedWords(f)),
    metrics: (m, account) => m.cancelPasses.inc({ account, outcome: "failed" }),
  },
  cancelRetry: {
    log: ({ type: _, ...f }) => line("warn", "engine.cancel_retry", f, cancelRetryWords(f)),
    metrics: (m, account) => m.cancelPasses.inc({ account, outcome: "retried" }),
  },
};

export function engineDownWords(e: Of<"engineDown">): string {
  if (e.action === "expedite")
    return "trading engine down: scheduling the cancel at the 5 s minimum (the exchange cancels the open orders, one trigger), then no more pushes until the engine is back";
  if (e.action === "cancel")
    return "trading engine down: cancelling the open orders now and again each interval while it stays down; once a pass is confirmed the schedule keeps being renewed a full deadline ahead as the backstop (no trigger spent); a pass not confirmed moves it to the 5 s minimum instead";
  return e.armedUntil === null
    ? "trading engine down: no more pushes until the engine is back; nothing is armed"
    : `trading engine down: no more pushes until the engine is back; the armed deadline lapses at ${new Date(e.armedUntil).toISOString()} (the exchange cancels the open orders, one trigger)`;
}

export function engineUpWords(e: Of<"engineUp">): string {
  return e.renewing
    ? "trading engine back: no more cancel passes; the schedule goes on being renewed as before"
    : "trading engine back: pushing again, a full deadline ahead";
}

export function cancelFailedWords(f: Omit<Of<"cancelFailed">, "type">): string {
  const retried = f.retries > 0 ? `, after ${f.retries} tries again` : "";
  const weight = f.weight !== undefined ? `; the pass spent ${f.weight} of the IP's weight` : "";
  return `engine down: cancelling open orders was not confirmed (${f.reason}${retried}${weight}); scheduling the cancel at the 5 s minimum (the exchange cancels the open orders, one trigger), then no more pushes or cancel passes until the engine is back`;
}

export function cancelRetryWords(f: Omit<Of<"cancelRetry">, "type">): string {
  return `engine down: the cancel pass was refused (${f.reason}, a ${f.request}); ${f.cancelled} order(s) cancelled so far, trying again in ${f.retryInMs} ms; no trigger spent yet (the fall-back to the 5 s minimum only if still refused in ${f.giveUpInMs} ms)`;
}
