/** The audit trail component (src/app/daemon.ts, `daemonComponents`). */
import { hostname } from "node:os";
import { join } from "node:path";
import type { EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import { VERSION } from "../../core/version.js";
import { auditSubscriber } from "../../surface/audit/events.js";
import { AUDIT_DIR, AuditTrail } from "../../surface/audit/trail.js";
import type { Component } from "../components.js";
import type { Base } from "../context.js";

/**
 * The audit trail (src/surface/audit/): every change of protection and every action on orders, hash-chained in
 * `<stateDir>/audit/`. It starts right after the bus so that it sees every event of the start, and closes late, after
 * the switches' last words (removed or kept). A disk that refuses the trail is reported; it never stops the switch.
 */
export function auditComponent(): Component<Base & { bus: EventBus; logger: Logger }, { audit: AuditTrail }> {
  let audit: AuditTrail | undefined;
  let unsubscribe: (() => void) | undefined;
  return {
    name: "audit",
    async start({ params, runtime, bus, logger, accounts, config }) {
      const log = logger.child({ module: "audit" });
      let failures = 0;
      const options = {
        dir: join(params.stateDir, AUDIT_DIR),
        source: `/hl-deadman/${hostname()}`,
        now: () => runtime.clock.now(),
        onError: (error: Error) => {
          failures++;
          log.warn(
            { event: "audit.write_failed", failures, error: error.message },
            `the audit trail could not be written (${error.message}); its records wait and are written with the next one. The switch is not affected.`,
          );
        },
      };
      try {
        audit = await AuditTrail.open(options);
      } catch (error) {
        // Never a reason not to protect: the daemon runs on without a trail, and says so loudly.
        const reason = error instanceof Error ? error.message : String(error);
        audit = AuditTrail.unavailable(options, reason);
        log.error(
          { event: "audit.unavailable", error: reason },
          `the audit trail cannot be opened (${reason}); the daemon runs WITHOUT an audit trail until it is fixed and restarted`,
        );
      }
      audit.append({ type: "daemon.started", data: { version: VERSION, accounts, network: config.network } });
      unsubscribe = bus.subscribe(auditSubscriber((entry) => audit?.append(entry)));
      return { audit };
    },
    async close() {
      unsubscribe?.();
      audit?.append({ type: "daemon.stopped", data: {} });
      await audit?.close();
    },
  };
}
