/**
 * `hl-deadman kill` with no daemon running (docs/operations.md "The kill switch"): the command does what the daemon
 * would, alone, under the state directory's lock (a daemon starting meanwhile waits for it, exit 75; one that holds
 * it is asked instead). For each named account: HALTED written to the ledger before anything leaves, every resting
 * order cancelled (stops included) by the daemon's own canceller (fast cancels, then the confirming read), with
 * `close` one reduce-only close pass by the daemon's own close executor, the pass written ahead and its answer after
 * it; each step appended to the audit trail. The next daemon finds the account HALTED (and a pass not finished
 * reported as "closing stopped at restart"). Each account is acted on under its own signer's key (config `signers`),
 * as the daemon does: a kill that took only one signer's accounts while naming `--all` would leave orders behind.
 */
import { hostname } from "node:os";
import { join } from "node:path";
import { effectiveUrls } from "../config/load.js";
import type { Config } from "../config/schema.js";
import type { Clock } from "../core/clock.js";
import { createCloseExecutor } from "../orders/close-executor.js";
import { createCancelExecutor } from "../protocol/hyperliquid/cancel.js";
import { ExchangeClient } from "../protocol/hyperliquid/exchange.js";
import { InfoClient } from "../protocol/hyperliquid/info.js";
import { AUDIT_DIR, AuditTrail } from "../surface/audit/trail.js";
import type { CloseOutcome } from "../switch/api.js";
import { Ledger } from "../switch/ledger.js";
import { planAccounts, planSigners } from "./daemon.js";
import { acquireStateLock } from "./lock.js";

export type KillAloneAnswer = {
  account: string;
  done: true;
  latched: boolean;
  cancelMs: number;
  cancel: { confirmed: boolean; cancelled: number; kept: number; detail?: string | undefined };
  close: CloseOutcome | null;
};

export async function killAlone(p: {
  config: Config;
  stateDir: string;
  /** the account named, or every account the configuration arms */
  account: string | "all";
  close: boolean;
  by: string;
  clock: Clock;
  monotonic: () => number;
  /** the signing keys: one (`keyFile`, the environment), or each of config `signers` with its accounts */
  wallets: {
    address: string;
    wallet: ConstructorParameters<typeof ExchangeClient>[0]["signer"];
    account?: string | undefined;
    vaults?: readonly string[];
  }[];
}): Promise<KillAloneAnswer[]> {
  const { config, clock } = p;
  const first = p.wallets[0];
  if (first === undefined) throw new Error("no signing key");
  const everyAccount =
    config.signers.length > 0
      ? planSigners(
          p.wallets.map((w) => ({ address: w.address, account: w.account, vaults: w.vaults ?? [] })),
        )
      : planAccounts(config, first.address);
  const plan = everyAccount.filter((e) => p.account === "all" || e.account === p.account);
  if (plan.length === 0)
    throw new Error(
      `${p.account} is not an account this configuration arms (check --account and the config)`,
    );
  const lock = acquireStateLock(p.stateDir);
  const ledger = await Ledger.open({
    stateDir: p.stateDir,
    clock,
    triggerLimit: config.triggerLimit,
  });
  const audit = await AuditTrail.open({
    dir: join(p.stateDir, AUDIT_DIR),
    source: `/hl-deadman/${hostname()}`,
    now: () => clock.now(),
  }).catch((e: unknown) =>
    AuditTrail.unavailable({ dir: "", source: "", now: () => clock.now() }, String(e)),
  );
  const { apiUrl } = effectiveUrls(config);
  const info = new InfoClient({ apiUrl, clock, timeoutMs: config.requestTimeout });
  // every listed dex, as the daemon's kill (docs/operations.md, "Every listed dex"): "" first, then each `--dex`
  const dexes = [...new Set(["", ...config.dexes])];
  // per signer: its exchange client (its own nonces), its canceller and its closer
  const bySigner = new Map(
    p.wallets.map((w) => {
      const exchange = new ExchangeClient({
        apiUrl,
        signer: w.wallet,
        isMainnet: config.network === "mainnet",
        clock,
        expiresAfterMs: config.requestTimeout,
        timeoutMs: config.requestTimeout,
      });
      const cancel = createCancelExecutor({ info, exchange, dexes });
      const closer = createCloseExecutor({
        info,
        dexes,
        exchange,
        cancelOpenOrders: cancel,
        slippagePct: config.closeSlippagePct,
        maxSliceUsd: config.closeSliceUsd,
      });
      return [w.address, { exchange, cancel, closer }] as const;
    }),
  );
  try {
    return await Promise.all(
      plan.map(async ({ account, vaultAddress, signer }) => {
        const { cancel, closer } = bySigner.get(signer)!;
        const started = p.monotonic();
        const entry = ledger.initial(account);
        const latched = entry.halted === undefined;
        const halted = entry.halted ?? {
          since: Math.floor(clock.now()),
          reason: `the operator's kill (${p.by})`.slice(0, 500),
        };
        const pass = (halted.pass ?? 0) + 1;
        // Written ahead of anything that leaves: the latch, and the pass when there is one.
        ledger.put({ ...entry, halted: p.close ? { ...halted, closing: "open", pass } : halted });
        await ledger.durable(config.requestTimeout);
        audit.append({
          type: "kill.started",
          account,
          data: { by: p.by, close: p.close, latched, alone: true },
        });
        const vault = vaultAddress ? { vaultAddress } : {};
        const c = await cancel({ account, ...vault, cancelStops: true }).catch((error: unknown) => ({
          confirmed: false,
          cancelled: 0,
          kept: 0,
          detail: error instanceof Error ? error.message : String(error),
        }));
        const cancelMs = p.monotonic() - started;
        audit.append({ type: "kill.cancelled", account, data: { by: p.by, ...c, alone: true } });
        let closed: CloseOutcome | null = null;
        if (p.close) {
          closed = await closer({ account, ...vault, pass });
          const remaining = closed.flat ? "" : (closed.remaining ?? "");
          ledger.put({
            ...ledger.initial(account),
            halted: {
              ...halted,
              closing: closed.flat ? "done" : "open",
              pass,
              remaining: remaining.slice(0, 500),
            },
          });
          await ledger.durable(config.requestTimeout);
          audit.append({
            type: closed.flat ? "escalation.closed" : "escalation.close-incomplete",
            account,
            data: {
              pass,
              orders: closed.orders.length,
              filledUsd: closed.filledUsd,
              dust: closed.dust,
              refusal: closed.refusal,
              detail: closed.detail ?? null,
              alone: true,
            },
          });
        }
        return { account, done: true as const, latched, cancelMs, cancel: c, close: closed };
      }),
    );
  } finally {
    for (const { exchange } of bySigner.values()) exchange.close();
    info.close();
    await audit.close();
    await ledger.close();
    lock.release();
  }
}
