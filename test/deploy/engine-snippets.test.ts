/**
 * The engines of docs/operations.md, "Cancel on disconnect": each snippet, extracted from the doc and run exactly as
 * written there (only the socket path replaced), holds a real connection guard (src/watchers/connection-guard.ts)
 * on a Unix socket, survives a restart of the guard in the middle (it reconnects and stays alive), and when its own
 * process is killed (not its group) the guard sees the engine down. Python (`python3` with the shipped module
 * engines/python/hl_deadman_guard.py), the shell (`socat`) and TypeScript (`hl-deadman/engine`, resolved by the
 * package's own name from dist/, so `npm run build` first); the TypeScript and Python snippets' announced orders
 * (protocol version 2) reach the restarted daemon. A missing program fails the test with its install
 * command; nothing is skipped. And the engine subpath is proven dependency-free: importing it loads neither ethers,
 * got nor pino.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { socketGuard } from "../helpers/guard.js";
import { assertBuilt, ROOT } from "../helpers/process.js";
import { tempDir } from "../reliability/harness.js";

const ACCOUNT = "0x1111111111111111111111111111111111111111";
const DOC_SOCKET = "/run/hl-deadman/guard.sock";
const doc = readFileSync(path.join(ROOT, "docs/operations.md"), "utf8");
const section = doc.slice(
  doc.indexOf("## Cancel on disconnect"),
  doc.indexOf("\n## ", doc.indexOf("## Cancel on disconnect") + 5),
);

/** The first fenced block of `lang` in the section. */
function snippet(lang: string): string {
  const fence = "```";
  const m = new RegExp(`${fence}${lang}\\n([\\s\\S]*?)${fence}`).exec(section);
  if (!m) throw new Error(`docs/operations.md "Cancel on disconnect" has no \`\`\`${lang} snippet`);
  expect(m[1], `${lang} snippet uses the documented socket`).toContain(DOC_SOCKET);
  return m[1]!;
}

function need(program: string, install: string) {
  const found = spawnSync("sh", ["-c", `command -v ${program}`], { encoding: "utf8" });
  if (found.status !== 0) throw new Error(`${program} not found: ${install}`);
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const startGuard = (socket: string) => socketGuard(socket, [ACCOUNT]);

/**
 * Runs the engine, waits for its account up, restarts the daemon's guard (stop, then a new one on the same socket:
 * a graceful restart or upgrade) and waits for the engine to be back and still alive, then kills the engine's OWN
 * process (not its group: a crash or the OOM killer kills one process, and an orphan left holding the connection
 * must not hide the death), and waits for the down.
 */
/** The orders the TypeScript and Python snippets announce (version 2): a resting limit and a stop. */
const ANNOUNCED = [
  { oid: 91000000001, asset: 0, trigger: false, reduceOnly: false },
  { oid: 91000000002, asset: 0, trigger: true, reduceOnly: true },
];

async function holdsAndDies(start: (socket: string) => ChildProcess, what: string, announces = false) {
  const dir = tempDir("hl-snip-");
  cleanups.push(() => dir.cleanup());
  const socket = path.join(dir.dir, "guard.sock");
  let guard = startGuard(socket);
  await guard.g.start();
  cleanups.push(
    () => guard.g.stop(),
    () => guard.timers.dispose(),
  );
  const child = start(socket);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  let exited: string | null = null;
  child.on("exit", (code, signal) => {
    exited = `exit ${code} ${signal}`;
  });
  cleanups.push(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // gone already
    }
  });
  const up = () => guard.g.status().accounts?.[ACCOUNT] === "up";
  await eventually(up, { what: () => `${what} connected (stderr: ${stderr})`, timeoutMs: 15_000 });
  expect(guard.changes).toEqual([]);

  await guard.g.stop();
  guard.timers.dispose();
  guard = startGuard(socket);
  await guard.g.start();
  await eventually(up, {
    what: () => `${what} reconnected after the daemon's restart (${exited ?? "alive"}; stderr: ${stderr})`,
    timeoutMs: 15_000,
  });
  expect(exited, `${what} survives the daemon's restart (stderr: ${stderr})`).toBeNull();
  if (announces) {
    // the announcement is sent again to the restarted daemon, and kept there after the engine's death
    await eventually(() => guard.g.orders(ACCOUNT)?.length === ANNOUNCED.length, {
      what: () => `${what}'s orders announced to the restarted daemon (stderr: ${stderr})`,
    });
    expect(guard.g.orders(ACCOUNT)).toEqual(ANNOUNCED);
  }

  process.kill(child.pid!, "SIGKILL");
  await eventually(() => guard.changes.length > 0, { what: `${what}'s death seen`, timeoutMs: 10_000 });
  expect(guard.changes).toEqual([[ACCOUNT, false]]);
}

const run = (cmd: string, args: string[], cwd = ROOT, env: NodeJS.ProcessEnv = process.env) =>
  spawn(cmd, args, { cwd, env, detached: true, stdio: ["ignore", "ignore", "pipe"] });

describe("engines of docs/operations.md", () => {
  test("behavior: TypeScript, hl-deadman/engine's holdSwitch, holds the switch through a daemon restart; killed → down", async () => {
    assertBuilt();
    const code = snippet("ts");
    await holdsAndDies(
      (socket) => run(process.execPath, ["--input-type=module", "-e", code.replace(DOC_SOCKET, socket)]),
      "TypeScript",
      true,
    );
  });

  test("behavior: Python (engines/python/hl_deadman_guard.py) holds the switch through a daemon restart; killed → down", async () => {
    need("python3", "apt-get install -y python3");
    // the snippet, then the engine's own work (the guard's thread never keeps the process alive on its own)
    const code = `${snippet("python")}\nimport time\nwhile True:\n    time.sleep(0.05)\n`;
    await holdsAndDies(
      (socket) =>
        run("python3", ["-c", code.replace(DOC_SOCKET, socket)], ROOT, {
          ...process.env,
          PYTHONPATH: path.join(ROOT, "engines/python"),
        }),
      "Python",
      true,
    );
  });

  test("behavior: the shell (socat) holds the switch through a daemon restart; the engine killed alone → down", async () => {
    need("socat", "apt-get install -y socat");
    const code = `${snippet("sh")}\nwhile :; do sleep 1; done\n`;
    await holdsAndDies((socket) => run("sh", ["-c", code.replace(DOC_SOCKET, socket)]), "socat");
  });

  test("behavior: importing hl-deadman/engine loads neither ethers nor got nor pino (the main entry does)", () => {
    assertBuilt();
    const dir = tempDir("hl-hook-");
    cleanups.push(() => dir.cleanup());
    const hook = path.join(dir.dir, "hook.mjs");
    // The hooks run on the loader's own thread: its `process.stderr.write` is handed to the main thread and may be
    // lost when the process exits right after the import (the last modules' lines went missing under load), so the
    // hook writes to fd 2 itself, synchronously.
    writeFileSync(
      hook,
      'import { writeSync } from "node:fs";\nexport async function load(url, context, next) { writeSync(2, "LOAD " + url + "\\n"); return next(url, context); }\n',
    );
    const register = path.join(dir.dir, "register.mjs");
    writeFileSync(
      register,
      `import { register } from "node:module";\nregister(${JSON.stringify(`file://${hook}`)});\n`,
    );
    const loaded = (entry: string) => {
      const r = spawnSync(
        process.execPath,
        ["--import", register, "--input-type=module", "-e", `await import(${JSON.stringify(entry)})`],
        {
          cwd: ROOT,
          encoding: "utf8",
          timeout: 30_000,
        },
      );
      expect(r.status, r.stderr).toBe(0);
      return r.stderr
        .split("\n")
        .filter((l) => l.startsWith("LOAD "))
        .map((l) => l.slice(5));
    };
    const engine = loaded("hl-deadman/engine");
    expect(engine).toContain(`file://${path.join(ROOT, "dist/engine/index.js")}`);
    expect(engine.filter((u) => /node_modules\/(ethers|got|pino)\//.test(u))).toEqual([]);
    expect(
      engine.every((u) => u.startsWith("node:") || u.startsWith(`file://${path.join(ROOT, "dist")}/`)),
    ).toBe(true);
    // the check can fail: the package's main entry does load them (the daemon's logger loads pino)
    const main = [...loaded("hl-deadman"), ...loaded(`file://${path.join(ROOT, "dist/core/logger.js")}`)];
    for (const dep of ["ethers", "got", "pino"])
      expect(
        main.some((u) => u.includes(`node_modules/${dep}/`)),
        dep,
      ).toBe(true);
  });
});
