#!/usr/bin/env node
import { processDeps } from "../cli/deps.js";
import { runCli } from "../cli/program.js";

process.exitCode = await runCli(process.argv, processDeps());
