import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Command, Option } from "commander";
import { effectiveStateDir, loadConfig } from "../../config/load.js";
import { entryOnDay, LEDGER_FILE, readLedgerFile } from "../../daemon/ledger.js";
import { utcDay } from "../../utils/clock.js";
import { formatDuration } from "../../utils/duration.js";
import { ExitCode } from "../../utils/exit-codes.js";
import type { CliDeps } from "../deps.js";
import { CliError } from "../errors.js";

export type StatusAccount = {
  account: string;
  day: string;
  triggersToday: number;
  triggerLimit: number;
  armedUntil: number | null;
  exhausted: boolean;
};

export function registerStatus(program: Command, deps: CliDeps): void {
  program
    .command("status")
    .description("the local trigger ledger and armed deadline of each account")
    .addOption(
      new Option(
        "--state-dir <dir>",
        "where the trigger ledger lives (env HL_STATE_DIR, then STATE_DIRECTORY)",
      ),
    )
    .addOption(new Option("--config <file>", "JSON config file (env HL_CONFIG)"))
    .addOption(new Option("--json", "one JSON document on stdout"))
    .action(async (opts: Record<string, unknown>) => {
      const { config } = loadConfig({
        options: { stateDir: opts.stateDir, config: opts.config },
        env: deps.env,
        cwd: deps.cwd,
      });
      const stateDir = effectiveStateDir(config, deps.cwd);
      // A typo in --state-dir must not read as "no ledger yet": a missing directory is exit 66 (EX_NOINPUT).
      if (!existsSync(stateDir))
        throw new CliError(
          `The state directory ${stateDir} does not exist (check --state-dir, HL_STATE_DIR or STATE_DIRECTORY).`,
          ExitCode.noInput,
        );
      const path = join(stateDir, LEDGER_FILE);
      const read = await readLedgerFile(path);
      if (!read.ok)
        throw new CliError(
          `The trigger ledger ${path} ${read.reason}. The daemon moves such a file aside at start and assumes the daily limit is used.`,
          ExitCode.runtime,
        );
      const now = deps.clock.now();
      const today = utcDay(now);
      const accounts: StatusAccount[] = Object.values(read.file?.accounts ?? {}).map((stored) => {
        const e = entryOnDay(stored, today);
        return {
          account: e.account,
          day: e.day,
          triggersToday: e.triggersToday,
          triggerLimit: e.limit,
          armedUntil: e.armedUntil,
          exhausted: e.triggersToday >= e.limit,
        };
      });
      if (opts.json) {
        deps.stdout.write(`${JSON.stringify({ accounts })}\n`);
        return;
      }
      const out = (s: string) => deps.stdout.write(`${s}\n`);
      if (!read.file) {
        out(`No trigger ledger at ${path} (the daemon has not run with this state directory).`);
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
          `${a.account}  triggers ${a.triggersToday}/${a.triggerLimit} used, ${left} left${a.exhausted ? " EXHAUSTED until 00:00 UTC" : ""}${stored?.assumed ? " (assumed: the ledger was unreadable)" : ""}  ${armed}`,
        );
      }
    });
}
