/** In-process CLI runs with captured stdout/stderr (issue 16 tests). */
import { Writable } from "node:stream";
import { runCli } from "../../src/cli/program.js";
import { systemClock } from "../../src/utils/clock.js";

export type CliRun = { code: number; stdout: string; stderr: string };

export async function cli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  { tty = false, cwd = process.cwd() }: { tty?: boolean; cwd?: string } = {},
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const sink = (append: (s: string) => void) =>
    Object.assign(
      new Writable({
        write(c, _e, cb) {
          append(String(c));
          cb();
        },
      }),
      { isTTY: tty, columns: 80 },
    );
  const saved = process.exitCode;
  const code = await runCli(["node", "hl-deadman", ...args], {
    stdout: sink((s) => {
      stdout += s;
    }),
    stderr: sink((s) => {
      stderr += s;
    }),
    env,
    clock: systemClock,
    cwd,
  });
  process.exitCode = saved;
  return { code, stdout, stderr };
}
