/**
 * `hl-deadman logs`: the daemon's JSON log lines, read from stdin (or files), printed for people the way `run` prints
 * them on a terminal (pino-pretty, which the package already ships): `journalctl -u hl-deadman -o cat | hl-deadman
 * logs`, `pm2 logs --raw hl-deadman | hl-deadman logs`, `kubectl logs … | hl-deadman logs`. A line that is not a
 * JSON object is printed as it is.
 */
import { createReadStream } from "node:fs";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { type Command, Option } from "commander";
import type PinoPretty from "pino-pretty";
import { ExitCode } from "../../core/exit-codes.js";
import type { CliDeps } from "../deps.js";
import { CliError } from "../errors.js";

type LogsOptions = { color?: boolean; pretty?: boolean };

/** One JSON log line -> the pretty line `run` writes on a terminal; anything else unchanged. */
export function prettyLines(colorize: boolean): (line: string) => string {
  const { prettyFactory } = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
  const pretty = prettyFactory({
    colorize,
    translateTime: "SYS:yyyy-mm-dd HH:MM:ss.l",
    ignore: "pid,hostname,module",
    singleLine: true,
  });
  return (line) => {
    const text = line.trim();
    if (!text.startsWith("{")) return `${line}\n`;
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return `${line}\n`;
      return pretty(parsed as Record<string, unknown>);
    } catch {
      return `${line}\n`;
    }
  };
}

async function prettyStream(input: Readable, deps: CliDeps, format: (line: string) => string): Promise<void> {
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) deps.stdout.write(format(line));
}

export function registerLogs(program: Command, deps: CliDeps, stdin: () => Readable): void {
  program
    .command("logs")
    .description(
      "print the daemon's JSON log lines for people (read from stdin, or FILE...): journalctl -u hl-deadman -o cat | hl-deadman logs",
    )
    .argument("[file...]", "log files to read instead of stdin")
    .addOption(new Option("--pretty", "pretty lines, one per event (the default; accepted for clarity)"))
    .addOption(new Option("--no-color", "no colours (the default when stdout is not a terminal)"))
    .action(async (files: string[], opts: LogsOptions) => {
      const format = prettyLines(opts.color !== false && deps.stdout.isTTY === true);
      if (files.length === 0) return prettyStream(stdin(), deps, format);
      for (const file of files) {
        const input = createReadStream(file);
        const opened = new Promise<void>((resolve, reject) => {
          input.once("open", () => resolve());
          input.once("error", reject);
        });
        try {
          await opened;
        } catch (error) {
          throw new CliError(
            `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`,
            ExitCode.noInput,
          );
        }
        await prettyStream(input, deps, format);
      }
    });
}
