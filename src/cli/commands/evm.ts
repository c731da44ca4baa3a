import type { Command } from "commander";
import type { CliDeps } from "../deps.js";
import { notBuilt } from "../not-built.js";

export function registerEvm(program: Command, _deps: CliDeps): void {
  const evm = program.command("evm").description("HyperEVM block queries (ots_ namespace)");
  evm.command("header").description("ots_getHeaderByNumber").action(notBuilt("evm header"));
  evm.command("txs").description("ots_getBlockTransactions").action(notBuilt("evm txs"));
  evm
    .command("probe")
    .description("whether the node serves the ots_ namespace")
    .action(notBuilt("evm probe"));
}
