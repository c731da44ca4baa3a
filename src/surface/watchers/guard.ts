/**
 * The engine guard's events (src/core/events.ts `GuardEvent`: the file and URL guard, src/watchers/guard.ts, and the
 * connection guard, src/watchers/connection-guard.ts) as log lines and metrics, subscribers of the daemon's bus.
 */
import type { EventSubscriber } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { Metrics } from "../metrics.js";

/** The guard's log lines, a subscriber of the bus (on the logger's `{ module: "guard" }` child). */
export function guardLog(logger: Logger): EventSubscriber {
  const log = logger.child({ module: "guard" });
  return (e) => {
    if (e.module !== "guard") return;
    if (e.type === "guardFutureMtime")
      log.warn(
        { event: "guard.future_mtime", file: e.file, aheadMs: e.aheadMs },
        `guard file ${e.file} has an mtime ${e.aheadMs} ms in the future: treated as stale until it is touched with the right time`,
      );
    else if (e.type === "guardChecked")
      log.debug({ event: "guard.check", ok: e.ok, detail: e.detail }, "guard checked");
    // the connection guard (src/watchers/connection-guard.ts)
    else if (e.type === "guardListening")
      log.info(
        { event: "guard.listening", address: e.address, accounts: e.accounts },
        `connection guard listening on ${e.address}; waiting for the engine to connect for ${e.accounts.join(", ")}`,
      );
    else if (e.type === "engineConnected")
      log.info(
        {
          event: "guard.connected",
          connection: e.connection,
          accounts: e.accounts,
          connections: e.connections,
        },
        `engine connected (connection ${e.connection}) for ${e.accounts.join(", ")}`,
      );
    else if (e.type === "engineRefused") {
      // A first line read and refused is an engine that believes it guards accounts it does not: said at error,
      // with what it tried (the accounts stay `waiting`, or go down at their connect grace).
      if (e.hello)
        log.error(
          {
            event: "guard.refused",
            connection: e.connection,
            reason: e.reason,
            version: e.hello.version,
            accounts: e.hello.accounts,
          },
          `engine connection ${e.connection} refused (${e.hello.version || "no version"} for ${e.hello.accounts.join(", ") || "no account"}): ${e.reason}; it guards nothing`,
        );
      else
        log.warn(
          { event: "guard.refused", connection: e.connection, reason: e.reason },
          `engine connection ${e.connection} refused: ${e.reason}`,
        );
    } else if (e.type === "engineDetach")
      log.info(
        { event: "guard.detach", connection: e.connection, accounts: e.accounts, graceMs: e.ms },
        `engine connection ${e.connection} detaches: closing within ${e.ms} ms is a planned restart`,
      );
    else if (e.type === "engineLineIgnored")
      log.warn(
        { event: "guard.line_ignored", connection: e.connection, reason: e.reason },
        `engine connection ${e.connection}: ${e.reason}`,
      );
    else if (e.type === "engineDisconnected")
      log.info(
        { event: "guard.disconnected", connection: e.connection, accounts: e.accounts, reason: e.reason },
        `engine connection ${e.connection} gone (${e.reason}): ${e.detail}`,
      );
    else if (e.type === "engineAccount") {
      const fields = { event: `guard.engine_${e.state}`, account: e.account, detail: e.detail };
      if (e.state === "down") log.warn(fields, `engine down for ${e.account}: ${e.detail}`);
      else log.info(fields, `engine ${e.state} for ${e.account}: ${e.detail}`);
    }
  };
}

/**
 * The guard's metrics, a subscriber of the bus: `engineUp` up when configured, then every change; the connection
 * guard's `engine_state` per account.
 */
export function guardMetrics(metrics: Metrics): EventSubscriber {
  const changed = new Set<string>();
  return (e) => {
    if (e.module !== "guard") return;
    if (e.type === "guardConfigured") metrics.engineUp.set({ guard: e.kind }, 1);
    else if (e.type === "engineChanged") metrics.engineUp.set({ guard: e.kind }, e.up ? 1 : 0);
    // the connection guard's accounts: each waits from the start until an engine names it, then follows its changes
    // (an engine may connect while the socket's mode is set, before `guardListening`: its state is not undone)
    else if (e.type === "guardListening") {
      for (const a of e.accounts) if (!changed.has(a)) metrics.setEngineState(a, "waiting");
    } else if (e.type === "engineAccount") {
      changed.add(e.account);
      metrics.setEngineState(e.account, e.state);
    }
  };
}
