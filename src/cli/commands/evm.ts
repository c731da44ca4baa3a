/**
 * `hl-deadman evm header BLOCK|latest`, `evm txs BLOCK [--page N --size S | --all]`, `evm probe` (docs/evm.md, "The CLI").
 *
 * The RPC URL comes from --rpc-url, HL_RPC_URL, the config file's rpcUrl, then the network's default; it is shown
 * only redacted. `--json` prints exactly the method's shapes: the header as returned; for txs one object
 * `{ fullblock, txs, receipts }` (the page's transactions moved from `fullblock.transactions` to `txs`; with --all,
 * every transaction of the block in block order). `--all` shows progress on stderr when stderr is a terminal.
 *
 * Exit codes: 2 bad BLOCK/--page/--size or conflicting options; 1 unknown block ("block N not found") or a bad answer;
 * 69 RPC unreachable, HTTP error, or a node without the ots_ namespace (also `evm probe` answering no); 78 bad config.
 */
import { type Command, Option } from "commander";
import { effectiveUrls, loadConfig } from "../../config/load.js";
import { ArgumentError } from "../../core/errors/argument.js";
import { ExitCode } from "../../core/exit-codes.js";
import type { EvmClient } from "../../protocol/evm/client.js";
import { EvmError } from "../../protocol/evm/errors.js";
import { formatHeader, formatTransactions } from "../../protocol/evm/format.js";
import { type BlockTag, MAX_PAGE_SIZE } from "../../protocol/evm/otterscan.js";
import { exitCodeOfError, policyFor } from "../../protocol/policy.js";
import type { CliDeps } from "../deps.js";
import { CliError, usageError } from "../errors.js";
import { addServiceOptions, type ServiceOptions } from "../options.js";

type EvmOptions = ServiceOptions;
type TxsOptions = EvmOptions & { page?: string; size?: string; all?: boolean };

/** Default page size of `evm txs` for one page (Otterscan's PAGE_SIZE). */
export const DEFAULT_CLI_PAGE_SIZE = 25;

/** BLOCK argument: decimal, 0x-hex, or `latest`. Throws a usage error naming the value. */
export function parseBlockArg(value: string): BlockTag {
  if (value === "latest") return "latest";
  if (/^\d+$/.test(value) || /^0x[0-9a-fA-F]+$/.test(value)) {
    const n = BigInt(value);
    if (n <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(n);
  }
  throw usageError(
    `invalid BLOCK ${JSON.stringify(value)}: expected a block number (decimal or 0x-hex, at most ${Number.MAX_SAFE_INTEGER}) or latest`,
  );
}

/** A non-negative integer flag value within [min, max]; throws a usage error naming the flag and value. */
export function parseIntFlag(flag: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw usageError(`invalid ${flag} ${JSON.stringify(value)}: expected an integer from ${min} to ${max}`);
  return Number(value);
}

async function clientFor(opts: EvmOptions, deps: CliDeps): Promise<EvmClient> {
  const { config } = loadConfig({ options: { ...opts }, env: deps.env, cwd: deps.cwd });
  const { rpcUrl } = effectiveUrls(config);
  // The HTTP client is loaded when the command asks the node (src/cli/program.ts, "Loaded on use").
  const { EvmClient } = await import("../../protocol/evm/client.js");
  // requestTimeout is sized for one small exchange request; a page of up to 1,000 transactions gets at least 10 s.
  return new EvmClient({ rpcUrl, timeoutMs: Math.max(config.requestTimeout, 10_000) });
}

/** Maps client errors to the contract's exit codes (the policy table, src/core/errors/policy.ts) with a one-line message (never the raw URL). */
function cliErrorFor(error: unknown, command: string, client: EvmClient): unknown {
  if (error instanceof ArgumentError) return usageError(`${command}: ${error.shortMessage}`);
  if (!(error instanceof EvmError)) {
    if (error instanceof Error && "shortMessage" in error)
      return new CliError(
        `${command}: ${(error as { shortMessage: string }).shortMessage}`,
        exitCodeOfError(error) ?? ExitCode.runtime,
        {
          metaMessages: (error as { metaMessages?: string[] }).metaMessages,
        },
      );
    return error;
  }
  const { exitCode } = policyFor("evm", error.kind);
  switch (error.kind) {
    case "not_found":
      return new CliError(error.shortMessage, exitCode);
    case "transport":
    case "http":
      return new CliError(
        `${command}: the RPC at ${client.url} could not answer: ${error.shortMessage}`,
        exitCode,
        {
          details: error.details,
        },
      );
    case "method_not_found":
      return new CliError(
        `${command}: the node at ${client.url} does not serve ${error.method} (the ots_ namespace)`,
        exitCode,
      );
    default:
      return new CliError(`${command}: ${error.shortMessage}`, exitCode, {
        metaMessages: error.metaMessages,
      });
  }
}

async function withClient<T>(
  opts: EvmOptions,
  deps: CliDeps,
  command: string,
  fn: (client: EvmClient) => Promise<T>,
): Promise<T> {
  const client = await clientFor(opts, deps);
  try {
    return await fn(client);
  } catch (error) {
    throw cliErrorFor(error, command, client);
  } finally {
    client.close();
  }
}

export function registerEvm(program: Command, deps: CliDeps): void {
  const evm = program.command("evm").description("HyperEVM block queries (ots_ namespace)");

  addServiceOptions(
    evm
      .command("header")
      .description("ots_getHeaderByNumber: one block header (--json: as returned, hex quantities)")
      .argument("<block>", "block number (decimal or 0x-hex) or latest"),
  ).action(async (blockArg: string, opts: EvmOptions) => {
    const block = parseBlockArg(blockArg);
    const header = await withClient(opts, deps, "evm header", (c) => c.getHeaderByNumber(block));
    deps.stdout.write(opts.json ? `${JSON.stringify(header, null, 2)}\n` : `${formatHeader(header)}\n`);
  });

  addServiceOptions(
    evm
      .command("txs")
      .description("ots_getBlockTransactions: one page, or every page in block order with --all")
      .argument("<block>", "block number (decimal or 0x-hex) or latest")
      .addOption(new Option("--page <n>", "page number, 0-based (default 0)"))
      .addOption(
        new Option(
          "--size <n>",
          `page size, 1..${MAX_PAGE_SIZE} (default ${DEFAULT_CLI_PAGE_SIZE}; with --all the configured chainPageSize)`,
        ),
      )
      .addOption(new Option("--all", "every transaction of the block, in block order")),
  ).action(async (blockArg: string, opts: TxsOptions) => {
    const block = parseBlockArg(blockArg);
    if (opts.all && opts.page !== undefined) throw usageError("--all and --page cannot be used together");
    const page = opts.page === undefined ? 0 : parseIntFlag("--page", opts.page, 0, Number.MAX_SAFE_INTEGER);
    const size = opts.size === undefined ? undefined : parseIntFlag("--size", opts.size, 1, MAX_PAGE_SIZE);
    const progress = deps.stderr.isTTY === true && opts.all === true;
    const result = await withClient(opts, deps, "evm txs", async (c) => {
      if (!opts.all)
        return { ...(await c.getBlockTransactions(block, page, size ?? DEFAULT_CLI_PAGE_SIZE)), all: null };
      const { config } = loadConfig({ options: { ...opts }, env: deps.env, cwd: deps.cwd });
      const all = await c.blockTransactions(block, {
        pageSize: size ?? config.chainPageSize,
        concurrency: 4,
        onPage: progress
          ? ({ received, total, pages }) =>
              deps.stderr.write(`\rfetching: ${received}/${total} transactions (${pages} pages)`)
          : undefined,
      });
      if (progress) deps.stderr.write("\r\x1b[K");
      return { fullblock: all.fullblock, txs: all.txs, receipts: all.receipts, all };
    });
    if (opts.json) {
      const { fullblock, txs, receipts } = result;
      deps.stdout.write(`${JSON.stringify({ fullblock, txs, receipts }, null, 2)}\n`);
      return;
    }
    const total = result.fullblock.transactionCount;
    const what = result.all
      ? `all ${total} transactions (${result.all.pages} page(s); node page order: ${result.all.pageOrder})`
      : `page ${page} of size ${size ?? DEFAULT_CLI_PAGE_SIZE}: ${result.txs.length} of ${total} transactions`;
    const body = result.txs.length > 0 ? `\n\n${formatTransactions(result.txs, result.receipts)}` : "";
    deps.stdout.write(`${formatHeader(result.fullblock)}\n\n${what}${body}\n`);
  });

  addServiceOptions(
    evm.command("probe").description("whether the node serves the ots_ namespace; exit 0 yes, 69 no"),
  ).action(async (opts: EvmOptions) => {
    const { answer, url } = await withClient(opts, deps, "evm probe", async (c) => ({
      answer: await c.supportsOtterscan(),
      url: c.url,
    }));
    if (opts.json) deps.stdout.write(`${JSON.stringify({ rpc: url, ...answer })}\n`);
    // "No" is the policy of method_not_found (src/core/errors/policy.ts): exit 69.
    if (!answer.supported)
      throw new CliError(
        `the node at ${url} does not serve the ots_ namespace`,
        policyFor("evm", "method_not_found").exitCode,
      );
    if (!opts.json)
      deps.stdout.write(
        `the node at ${url} serves the ots_ namespace${answer.apiLevel === null ? "" : ` (api level ${answer.apiLevel})`}\n`,
      );
  });
}
