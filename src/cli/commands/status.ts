import { existsSync } from "node:fs";
import { type Command, Option } from "commander";
import { effectiveExplorerUrl, effectiveUrls, loadConfig } from "../../config/load.js";
import { optionOf } from "../../config/options.js";
import type { Config } from "../../config/schema.js";
import { utcDay } from "../../core/clock.js";
import { formatDuration } from "../../core/duration.js";
import { ExitCode } from "../../core/exit-codes.js";
import { redactUrl } from "../../core/redact.js";
import { entryOnDay, type LedgerEntry, readLedgerState } from "../../switch/ledger.js";
import {
  atLimit,
  isExhausted,
  limitRefused,
  type ProofCounts,
  proofCounts,
} from "../../switch/ledger-model.js";
import {
  type ReconcileOutcome,
  type RecordResult,
  readFinding,
  reconcileLedger,
} from "../../switch/record.js";
import type { CliDeps } from "../deps.js";
import { CliError } from "../errors.js";
import { collect, configFlag } from "../options.js";
import { stateDirOf } from "../state-dir.js";

export type StatusAccount = {
  account: string;
  day: string;
  triggersToday: number;
  triggerLimit: number;
  armedUntil: number | null;
  /** the PROVEN limit (the exchange's daily-limit refusal, or its scheduledCancel orders), or an assumed one */
  exhausted: boolean;
  /** the exchange refused a push today with its daily-limit error (the only count that stops the pushes) */
  limitRefused: boolean;
  /** the count reaches the limit without the exchange's proof: not ready, pushes continue */
  limitSuspected: boolean;
  /** today's count by proof */
  proofs: ProofCounts;
  /** today's counted triggers with their proof, oldest first */
  triggers: { deadline: number | null; proof: string }[];
  /** with --reconcile: what the exchange's record says, and what a reconcile would change (nothing is written) */
  record?: RecordResult;
  reconcile?: Pick<ReconcileOutcome, "changes" | "notes">;
  /** HALTED as the ledger holds it: the latch and its closes (`closing` open: a pass not finished) */
  halted?: LedgerEntry["halted"];
};

/** The HALTED latch and where its closes stood at the ledger's last write (docs/operations.md). */
function haltedLines(a: StatusAccount): string[] {
  const h = a.halted;
  if (!h) return [];
  const lines = [
    `  HALTED since ${new Date(h.since).toISOString()} (${h.reason}); release with hl-deadman reset --account ${a.account}`,
  ];
  if (h.closing === "done") lines.push(`  the positions were closed (pass ${h.pass ?? "?"})`);
  else
    lines.push(
      `  close pass ${h.pass ?? "?"} open${h.remaining ? `; positions left at its last read: ${h.remaining}` : ""}: a running daemon is closing or holding it (its /readyz says which); a stopped one left it open, and its next start says "closing stopped at restart"`,
    );
  return lines;
}

/**
 * `status --reconcile`: reads the exchange's record for each account (explorer userDetails + historicalOrders)
 * and shows it beside the ledger, with the changes a reconcile would make. Read-only: the daemon applies them
 * (docs/exchange-record.md).
 */
async function reconcileAccounts(
  config: Config,
  now: number,
  accounts: StatusAccount[],
  stored: Record<string, LedgerEntry>,
): Promise<void> {
  const { apiUrl } = effectiveUrls(config);
  const explorerUrl = effectiveExplorerUrl(config);
  const timeoutMs = Math.max(config.requestTimeout, 10_000);
  // The HTTP clients (got) are loaded only when the record is read (src/cli/program.ts, "Loaded on use").
  const [{ InfoClient }, { ExplorerClient }, { readRecord }] = await Promise.all([
    import("../../protocol/hyperliquid/info.js"),
    import("../../protocol/hyperliquid/explorer.js"),
    import("../../watchers/record-read.js"),
  ]);
  const info = new InfoClient({ apiUrl, timeoutMs });
  const explorer = explorerUrl ? new ExplorerClient({ explorerUrl, timeoutMs }) : null;
  try {
    for (const a of accounts) {
      const record = await readRecord({ explorer, info, account: a.account, now: () => now, readFinding });
      const entry = stored[a.account];
      const outcome = reconcileLedger(
        {
          day: a.day,
          triggersToday: a.triggersToday,
          assumed: entry?.assumed === true && entry.day === a.day,
          armedUntil: a.armedUntil,
          pendingUntil: entry?.pendingUntil ?? null,
        },
        record,
      );
      a.record = record;
      a.reconcile = { changes: outcome.changes, notes: outcome.notes };
    }
  } finally {
    info.close();
    explorer?.close();
  }
}

/** Where the record is read (named when it cannot be: a newcomer must see which host was tried). */
function recordSources(config: Config): string {
  const explorer = effectiveExplorerUrl(config);
  return `explorer ${explorer ? redactUrl(explorer) : "(none for this network)"}, API ${redactUrl(effectiveUrls(config).apiUrl)}`;
}

function recordLines(a: StatusAccount, now: number, sources = ""): string[] {
  const r = a.record;
  if (!r) return [];
  if (!r.available)
    return [
      `  record: unavailable (${r.reason}) from ${sources}: ${r.detail}; the ledger stands as it is` +
        (r.reason === "error" || r.reason === "unsupported"
          ? " (against the simulator, pass the --api-url and --explorer-url that `hl-deadman sim` prints)"
          : ""),
    ];
  const last = r.lastAccepted;
  const lines = [
    `  record: ${r.firesToday} fire(s) today${r.coversDay ? "" : " (the record does not reach back to 00:00 UTC)"}; ` +
      (r.armedUntil !== null
        ? `armed until ${new Date(r.armedUntil).toISOString()} (in ${formatDuration(r.armedUntil - now)})`
        : "nothing armed") +
      (last
        ? `; last accepted scheduleCancel at ${new Date(last.txTime).toISOString()} ${last.deadline === null ? "(removal)" : `for ${new Date(last.deadline).toISOString()}`}`
        : "; no accepted scheduleCancel listed"),
  ];
  for (const f of r.fires.filter((x) => x.day === r.day)) {
    lines.push(
      `    fired ${new Date(f.deadline).toISOString()}: ${f.cancelledOrders} order(s) scheduledCancel (${f.proof})`,
    );
  }
  if (r.refusedToday > 0)
    lines.push(`    ${r.refusedToday} scheduleCancel refused today; last: ${r.lastRefusal}`);
  for (const c of a.reconcile?.changes ?? []) {
    lines.push(`  reconcile would set ${c.field} ${String(c.from)} → ${String(c.to)}: ${c.reason}`);
  }
  for (const n of a.reconcile?.notes ?? []) lines.push(`  note: ${n}`);
  if ((a.reconcile?.changes.length ?? 0) === 0) lines.push("  the ledger agrees with the record");
  return lines;
}

const PROOF_TEXT: Record<string, string> = {
  limit_error: "the exchange's daily-limit refusal",
  orders: "scheduledCancel orders in historicalOrders",
  record: "a lapse the exchange's fresh record proves",
  guess: "guessed: a deadline passed without a newer confirmed push (no record proves it)",
};

/** Each counted trigger with its proof (docs/cli.md "status"). */
function proofLines(a: StatusAccount): string[] {
  const lines = a.triggers.map(
    (t) =>
      `  trigger ${t.deadline === null ? "(no deadline)" : new Date(t.deadline).toISOString()}: ${PROOF_TEXT[t.proof] ?? t.proof}`,
  );
  const p = a.proofs;
  if (p.limit_error > 0) lines.push(`  ${p.limit_error} counted from the exchange's daily-limit refusal`);
  if (p.unrecorded > 0) lines.push(`  ${p.unrecorded} of unrecorded proof (an older ledger file)`);
  if (a.limitRefused)
    lines.push("  the exchange refused a push with its daily-limit error today: pushes stop until 00:00 UTC");
  return lines;
}

export function registerStatus(program: Command, deps: CliDeps): void {
  program
    .command("status")
    .description("the local trigger ledger and armed deadline of each account")
    .addOption(configFlag(optionOf("stateDir")))
    .addOption(new Option("--config <file>", "JSON config file (env HL_CONFIG)"))
    .addOption(new Option("--json", "one JSON document on stdout"))
    .addOption(
      new Option(
        "--reconcile",
        "also read the exchange's record (explorer userDetails, historicalOrders) and show it beside the ledger; writes nothing",
      ),
    )
    .addOption(configFlag(optionOf("network")))
    .addOption(configFlag(optionOf("apiUrl")))
    .addOption(configFlag(optionOf("explorerUrl")))
    .addOption(
      new Option("--account <addr>", "an account to reconcile besides the ledger's (repeatable)").argParser(
        collect,
      ),
    )
    .action(async (opts: Record<string, unknown>) => {
      const { config } = loadConfig({
        options: {
          stateDir: opts.stateDir,
          config: opts.config,
          network: opts.network,
          apiUrl: opts.apiUrl,
          explorerUrl: opts.explorerUrl,
          account: opts.account,
        },
        env: deps.env,
        cwd: deps.cwd,
      });
      const stateDir = stateDirOf(config, deps);
      // A typo in --state-dir must not read as "no ledger yet": a missing directory is exit 66 (EX_NOINPUT).
      if (!existsSync(stateDir))
        throw new CliError(
          `The state directory ${stateDir} does not exist (check --state-dir, HL_STATE_DIR or STATE_DIRECTORY).`,
          ExitCode.noInput,
        );
      // either layout: the per-account ledger/ directory, or a ledger.json the daemon has not migrated yet
      const read = await readLedgerState(stateDir);
      const path = read.path;
      const damage = read.damaged[0];
      if (damage !== undefined)
        throw new CliError(
          `The trigger ledger's ${damage.path} ${damage.reason}${read.damaged.length > 1 ? ` (and ${read.damaged.length - 1} more damaged file(s))` : ""}. The daemon moves such a file aside at start and assumes the daily limit is used${damage.account ? ` for ${damage.account}` : ""}.`,
          ExitCode.runtime,
        );
      const now = deps.clock.now();
      const today = utcDay(now);
      const accounts: StatusAccount[] = Object.values(read.file?.accounts ?? {}).map((stored) => {
        const e = entryOnDay(stored, today);
        const rolled = e === stored ? e : { ...e, triggers: [], limitRefusedAt: null, removals: [] };
        const exhausted = isExhausted(rolled) || (rolled.assumed && atLimit(rolled));
        return {
          account: e.account,
          day: e.day,
          triggersToday: e.triggersToday,
          triggerLimit: e.limit,
          armedUntil: e.armedUntil,
          exhausted,
          limitRefused: limitRefused(rolled),
          limitSuspected: atLimit(rolled) && !exhausted,
          proofs: proofCounts(rolled),
          triggers: rolled.triggers.map((t) => ({ deadline: t.deadline, proof: t.proof })),
          ...(stored.halted ? { halted: stored.halted } : {}),
        };
      });
      if (opts.reconcile) {
        for (const extra of config.accounts) {
          if (!accounts.some((a) => a.account === extra)) {
            accounts.push({
              account: extra,
              day: today,
              triggersToday: 0,
              triggerLimit: config.triggerLimit,
              armedUntil: null,
              exhausted: false,
              limitRefused: false,
              limitSuspected: false,
              proofs: { limit_error: 0, orders: 0, record: 0, guess: 0, unrecorded: 0, assumed: 0 },
              triggers: [],
            });
          }
        }
        await reconcileAccounts(config, now, accounts, read.file?.accounts ?? {});
      }
      if (opts.json) {
        deps.stdout.write(`${JSON.stringify({ accounts })}\n`);
        return;
      }
      const out = (s: string) => deps.stdout.write(`${s}\n`);
      if (!read.file) {
        out(`No trigger ledger at ${path} (the daemon has not run with this state directory).`);
        for (const a of accounts) {
          out(`${a.account}  (not in the ledger)`);
          for (const line of recordLines(a, now, recordSources(config))) out(line);
        }
        return;
      }
      out(`ledger ${path} (UTC day ${today})`);
      if (accounts.length === 0) out("no accounts yet");
      for (const a of accounts) {
        const left = Math.max(0, a.triggerLimit - a.triggersToday);
        const stored = read.file.accounts[a.account];
        const armed =
          a.armedUntil === null
            ? "nothing armed"
            : a.armedUntil > now
              ? `armed until ${new Date(a.armedUntil).toISOString()} (in ${formatDuration(a.armedUntil - now)})`
              : `deadline ${new Date(a.armedUntil).toISOString()} passed ${formatDuration(now - a.armedUntil)} ago (the daemon counts it as a trigger at its next start)`;
        out(
          `${a.account}  triggers ${a.triggersToday}/${a.triggerLimit} used, ${left} left${a.exhausted ? " EXHAUSTED until 00:00 UTC" : ""}${a.limitSuspected ? " LIMIT SUSPECTED (not proven: pushes continue)" : ""}${stored?.assumed ? " (assumed: the ledger was unreadable)" : ""}  ${armed}`,
        );
        for (const line of proofLines(a)) out(line);
        for (const line of haltedLines(a)) out(line);
        for (const line of recordLines(a, now, recordSources(config))) out(line);
      }
    });
}
