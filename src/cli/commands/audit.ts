import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Command, Option } from "commander";
import { loadConfig } from "../../config/load.js";
import { optionOf } from "../../config/options.js";
import { ExitCode } from "../../core/exit-codes.js";
import { AUDIT_DIR, AuditFileError, verifyAuditDir } from "../../surface/audit/trail.js";
import type { CliDeps } from "../deps.js";
import { CliError } from "../errors.js";
import { configFlag } from "../options.js";
import { stateDirOf } from "../state-dir.js";

/**
 * `hl-deadman audit verify`: checks the audit trail's hash chain in the state directory (docs/operations.md, "The
 * audit trail"). Read-only, and safe beside a running daemon: the daemon only appends. Exit 0 when the chain holds,
 * 65 (EX_DATAERR) naming the first broken record, 66 when there is no trail.
 */
export function registerAudit(program: Command, deps: CliDeps): void {
  const audit = program.command("audit").description("the audit trail in the state directory");
  audit
    .command("verify")
    .description("check the audit trail's hash chain and name the first broken record")
    .addOption(configFlag(optionOf("stateDir")))
    .addOption(new Option("--config <file>", "JSON config file (env HL_CONFIG)"))
    .addOption(new Option("--json", "one JSON document on stdout"))
    .action(async (opts: Record<string, unknown>) => {
      const { config } = loadConfig({
        options: { stateDir: opts.stateDir, config: opts.config },
        env: deps.env,
        cwd: deps.cwd,
      });
      const dir = join(stateDirOf(config, deps), AUDIT_DIR);
      if (!existsSync(dir))
        throw new CliError(
          `There is no audit trail at ${dir} (check --state-dir, HL_STATE_DIR or STATE_DIRECTORY; the daemon creates it at its first start).`,
          ExitCode.noInput,
        );
      let result: Awaited<ReturnType<typeof verifyAuditDir>>;
      try {
        result = await verifyAuditDir(dir);
      } catch (error) {
        if (error instanceof AuditFileError)
          throw new CliError(`The audit trail is broken: ${error.message}`, ExitCode.dataErr);
        throw error;
      }
      if (!result.ok) {
        const where = `${join(dir, result.file)} line ${result.line}${result.sequence === null ? "" : ` (record ${result.sequence})`}`;
        throw new CliError(
          `The audit trail is broken at ${where}: ${result.reason}. ${result.records} record(s) before it verified.`,
          ExitCode.dataErr,
        );
      }
      if (opts.json === true) {
        deps.stdout.write(`${JSON.stringify({ dir, ...result })}\n`);
        return;
      }
      const first = result.firstSequence ?? 0;
      deps.stdout.write(
        `The audit trail at ${dir} holds: ${result.records} record(s) in ${result.files} file(s)` +
          (result.records > 0 ? `, ${first} to ${result.head.sequence}` : "") +
          (first > 1 ? ` (records before ${first} were rotated away; the manifest anchors them)` : "") +
          ".\n" +
          (result.torn > 0
            ? `${result.torn} line(s) cut short by a crash, each recorded by the daemon when it restarted.\n`
            : "") +
          (result.tornTail
            ? "The last line was cut short by a crash; the daemon records it when it next starts.\n"
            : "") +
          `Newest record ${result.head.sequence}, hash ${result.head.hash} (keep it elsewhere: a later verify proves nothing before it was rewritten).\n`,
      );
    });
}
