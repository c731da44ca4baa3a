/** The control channel component (src/app/daemon.ts, `daemonComponents`). */
import type { EventBus } from "../../core/events.js";
import type { Logger } from "../../core/logger.js";
import type { DrillIo } from "../../core/orders-port.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { AuditTrail } from "../../surface/audit/trail.js";
import type { Switch } from "../../switch/index.js";
import type { RecordResult } from "../../switch/record.js";
import type { Component } from "../components.js";
import type { Base } from "../context.js";
import {
  type ControlAnswer,
  type ControlRequest,
  type ControlServer,
  startControlServer,
} from "../control.js";
import { createDrillCommand, networkOf, restingNow } from "../drill.js";

/**
 * `hl-deadman kill` (docs/operations.md "When cancelling is not enough"): the named account, or every account
 * with `options.all`, each at once: latched HALTED, every resting order cancelled, with `options.close` closed
 * reduce-only. Answered with what each cancelled and closed, once every one has answered.
 */
async function kill(switches: readonly Switch[], request: ControlRequest): Promise<ControlAnswer> {
  const all = request.options?.all === true;
  const close = request.options?.close === true;
  if (all === (request.account !== undefined))
    return { ok: false, error: "name one account (--account) or --all, not both" };
  const targets = all ? switches : switches.filter((s) => s.account === request.account);
  if (targets.length === 0)
    return { ok: false, error: `${request.account ?? "no account"} is not an account this daemon arms` };
  const by = request.by ?? "unnamed";
  const outcomes = await Promise.all(
    targets.map(async (s) => ({ account: s.account, ...(await s.dispatch({ type: "kill", by, close })) })),
  );
  return { ok: true, result: { accounts: outcomes } };
}

/**
 * The control channel (src/app/control.ts): `reset` (and `drill`) from the operator's command line reach the running
 * daemon's switches here. Listed last: it answers only once every switch runs, and closes first.
 */
export function controlComponent(): Component<
  Base & {
    logger: Logger;
    switches: Switch[];
    audit: AuditTrail;
    bus: EventBus;
    drillIo: DrillIo | undefined;
    readRecord: ((account: string) => Promise<RecordResult>) | undefined;
    info: InfoClient;
    actOnDexes: string[];
  },
  { control: ControlServer | null }
> {
  let control: ControlServer | undefined;
  return {
    name: "control",
    async start(ctx) {
      const { params, config, apiUrl, logger, runtime, switches, audit, bus, drillIo, readRecord } = ctx;
      const find = (account: string | undefined) => switches.find((s) => s.account === account);
      const vaults = new Map(ctx.plan.map((p) => [p.account, p.vaultAddress]));
      const drill = createDrillCommand({
        // what rests now on every listed dex: the drill's fire takes it (its plan lists it, a confirm re-reads it)
        resting: (account) => restingNow(ctx.info, vaults.get(account) ?? account, ctx.actOnDexes),
        stateDir: params.stateDir,
        network: networkOf(apiUrl, config.network),
        coin: config.drillCoin,
        bus,
        timers: runtime.timers,
        now: () => runtime.clock.now(),
        readRecord,
        wired: drillIo !== undefined,
      });
      const opened = await startControlServer({
        stateDir: params.stateDir,
        logger,
        timers: runtime.timers,
        audit: (entry) => audit.append(entry),
        handlers: {
          reset(request) {
            const s = find(request.account);
            if (!s)
              return {
                ok: false,
                error: `${request.account ?? "no account"} is not an account this daemon arms`,
              };
            const r = s.dispatch({ type: "reset", by: request.by ?? "unnamed" });
            return r.released
              ? { ok: true, result: { account: s.account, released: true, detail: r.reason } }
              : { ok: false, error: r.reason };
          },
          drill: (request) => drill(find(request.account), request),
          kill: (request) => kill(switches, request),
        },
      }).catch((error: unknown) => {
        // Never a reason not to protect (a read-only state directory, a path too long for a socket): the daemon runs
        // on without `reset` and `drill`, and says so.
        const reason = error instanceof Error ? error.message : String(error);
        logger
          .child({ module: "control" })
          .error(
            { event: "control.unavailable", error: reason },
            `the control channel cannot listen (${reason}); reset and drill are unavailable until it is fixed and the daemon restarted`,
          );
        return null;
      });
      control = opened ?? undefined;
      return { control: opened };
    },
    close: () => control?.close(),
  };
}
