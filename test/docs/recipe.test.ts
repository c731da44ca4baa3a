/**
 * The README's recipe "Next to your engine", run as written against the simulator, as far as a machine without
 * systemd as its init allows. Every command and file comes from the README itself (and from the unit files it
 * installs), so README and test cannot drift: the key stored where the unit's LoadCredential= reads it; the README's
 * config file with the simulator's URL added; its `doctor --probe` command; `systemd-analyze verify` of the unit and
 * drop-in it installs (systemd is a test dependency: missing, this fails with the install command); the daemon
 * started with the unit's ExecStart arguments and environment (credentials, state directory, the drop-in's guard
 * socket); the README's Python lines as the engine; its `/readyz` URL answering 200; then the engine's own process
 * killed and the daemon seeing it down. Paths under /etc/hl-deadman, /run/hl-deadman and /opt/hl-deadman are mapped
 * into a temporary directory and this checkout.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { requireBinary } from "../helpers/binaries.js";
import { eventually } from "../helpers/eventually.js";
import { assertBuilt, ROOT, runCliProcess, type SpawnedProcess, spawnCli } from "../helpers/process.js";
import { tempDir } from "../reliability/harness.js";
import { codeBlocks, hlDeadmanArgs, sectionOf, shellCommands } from "./shell.js";

const recipe = sectionOf(readFileSync(path.join(ROOT, "README.md"), "utf8"), "Next to your engine");
const blocks = codeBlocks(recipe);
const sh = blocks.filter((b) => b.lang === "sh").map((b) => shellCommands(b.text));
const configBlock = blocks.find((b) => b.lang === "json");
const pythonBlock = blocks.find((b) => b.lang === "python");
const allCommands = sh.flat();

/** The unit file's `Key=value` lines (every occurrence). */
const unitValues = (text: string, key: string) =>
  [...text.matchAll(new RegExp(`^${key}=(.*)$`, "gm"))].map((m) => m[1]!.trim());

const master = Wallet.createRandom();
const agent = Wallet.createRandom();
const dir = tempDir("hl-recipe-");
/** A path the README names on the host, here. */
function local(p: string): string {
  if (p.startsWith("/opt/hl-deadman/")) return path.join(ROOT, p.slice("/opt/hl-deadman/".length));
  for (const prefix of ["/etc/hl-deadman", "/run/hl-deadman", "/etc/systemd/system"])
    if (p.startsWith(`${prefix}/`) || p === prefix)
      return path.join(dir.dir, prefix.slice(1).replaceAll("/", "_"), p.slice(prefix.length));
  throw new Error(`the recipe names a path this test does not map: ${p}`);
}
const mapArgs = (args: readonly string[]) => args.map((a) => (/^\/(etc|run|opt)\//.test(a) ? local(a) : a));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

let sim: SimulatorHandle;
let daemon: SpawnedProcess | undefined;
let engine: ReturnType<typeof spawn> | undefined;
let health = "";

beforeAll(async () => {
  assertBuilt();
  sim = await startSimulator({
    users: [{ address: master.address, agents: [agent.address] }],
    ipWeightPerMinute: null,
  });
  health = `127.0.0.1:${await freePort()}`;
}, 30_000);

afterAll(async () => {
  engine?.kill("SIGKILL");
  daemon?.kill("SIGKILL");
  await daemon?.exited;
  await sim?.close();
  dir.cleanup();
});

describe('README, "Next to your engine"', () => {
  const unitText = readFileSync(path.join(ROOT, "systemd/hl-deadman.service"), "utf8");
  const dropInText = readFileSync(path.join(ROOT, "systemd/hl-deadman.service.d/guard-socket.conf"), "utf8");
  const execArgs = unitValues(unitText, "ExecStart")[0]!.split(/\s+/);
  const runArgs = execArgs.slice(execArgs.findIndex((a) => a.endsWith("hl-deadman.js")) + 1);
  const doctor = allCommands.map(hlDeadmanArgs).find((a) => a?.[0] === "doctor");

  test("default: the recipe's steps are all there, and its paths are the unit's", () => {
    expect(sh.length, "the recipe's shell blocks").toBeGreaterThanOrEqual(4);
    expect(configBlock, "a json block: the config file").toBeDefined();
    expect(pythonBlock, "a python block: the guard in the engine").toBeDefined();
    expect(doctor, "a doctor command").toEqual(expect.arrayContaining(["--probe", "--config", "--key-file"]));
    // the key goes where the unit's LoadCredential= reads it, the config is the one ExecStart= names
    const keyPath = allCommands.find((c) => c.includes("cat") && c.includes(">"))?.at(-1);
    const credential = unitValues(unitText, "LoadCredential")[0]!;
    expect(credential).toBe(`hl-private-key:${keyPath}`);
    expect(doctor![doctor!.indexOf("--key-file") + 1]).toBe(keyPath);
    expect(doctor![doctor!.indexOf("--config") + 1]).toBe(runArgs[runArgs.indexOf("--config") + 1]);
    // the engine's socket is the one the drop-in gives the daemon
    const config = JSON.parse(configBlock!.text) as { guardSocket: string; health: string };
    expect(unitValues(dropInText, "Environment")).toContain(`HL_GUARD_SOCKET=${config.guardSocket}`);
    expect(pythonBlock!.text).toContain(`"${config.guardSocket}"`);
  });

  test("behavior: key, config, doctor --probe, the unit verified, run, the engine's guard, /readyz 200, the engine killed → down", async () => {
    // 1. the agent key, where the README's command writes it (mode 0600, as `umask 077` leaves it)
    const keyPath = allCommands.find((c) => c.includes("cat") && c.includes(">"))!.at(-1)!;
    mkdirSync(path.dirname(local(keyPath)), { recursive: true });
    writeFileSync(local(keyPath), `${agent.privateKey}\n`, { mode: 0o600 });
    chmodSync(local(keyPath), 0o600);

    // 2. the README's config file, the simulator's URL added and its addresses made this test's
    const config = JSON.parse(configBlock!.text) as Record<string, unknown> & {
      accounts: string[];
      guardSocket: string;
      health: string;
    };
    const placeholder = config.accounts[0]!;
    const readmeHealth = config.health;
    const socket = local(config.guardSocket);
    mkdirSync(path.dirname(socket), { recursive: true });
    const written = {
      ...config,
      accounts: [master.address],
      guardSocket: socket,
      health,
      apiUrl: sim.apiUrl,
      explorerUrl: sim.explorerUrl,
    };
    const configPath = local(doctor![doctor!.indexOf("--config") + 1]!);
    writeFileSync(configPath, JSON.stringify(written, null, 2));
    const stateDir = path.join(dir.dir, "var_lib_hl-deadman");
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const env = { STATE_DIRECTORY: stateDir };

    // 3. doctor --probe, as the README writes it: every check passes
    const checked = await runCliProcess(mapArgs(doctor!), env, { timeoutMs: 30_000 });
    expect(checked.code, `doctor --probe:\n${checked.stdout}\n${checked.stderr}`).toBe(0);

    // 4. the unit and the drop-in the README installs, verified by systemd-analyze
    const systemdAnalyze = requireBinary("systemd-analyze");
    const installs = allCommands.filter(
      (c) => c.includes("install") && c.some((w) => w.includes("/systemd/")),
    );
    expect(installs.length).toBe(2);
    for (const c of installs) {
      const [from, to] = c.slice(-2) as [string, string];
      const target = to.endsWith("/") ? path.join(local(to), path.basename(from)) : local(to);
      mkdirSync(path.dirname(target), { recursive: true });
      // the unit pointed at this checkout and this node, so that verify finds ExecStart's program
      writeFileSync(
        target,
        readFileSync(local(from), "utf8")
          .replace("/usr/bin/node ", `${process.execPath} `)
          .replaceAll("/opt/hl-deadman/", `${ROOT}/`)
          .replace("WorkingDirectory=/opt/hl-deadman", `WorkingDirectory=${ROOT}`),
      );
    }
    const unitPath = path.join(local("/etc/systemd/system"), "hl-deadman.service");
    const verified = spawnSync(systemdAnalyze, ["verify", unitPath], { encoding: "utf8", timeout: 15_000 });
    expect(verified.stderr + verified.stdout).toBe("");
    expect(verified.status).toBe(0);

    // 5. run, as the unit starts it: its arguments, the key as a credential, the drop-in's environment
    const credentials = path.join(dir.dir, "credentials");
    mkdirSync(credentials, { mode: 0o700 });
    copyFileSync(local(keyPath), path.join(credentials, "hl-private-key"));
    const dropInEnv = Object.fromEntries(
      unitValues(dropInText, "Environment").map((e) => {
        const [k, v] = e.split("=", 2) as [string, string];
        return [k, v.startsWith("/run/") ? local(v) : v];
      }),
    );
    daemon = spawnCli(mapArgs(runArgs), { ...env, ...dropInEnv, CREDENTIALS_DIRECTORY: credentials });
    await daemon.waitForEvent("guard.listening", 15_000);
    await daemon.waitForEvent("heartbeat.ok", 15_000);

    // 6. the README's Python lines as the engine, the module copied next to it from the package
    const python = requireBinary("python3");
    // the module's path is named in the recipe's prose
    expect(recipe).toContain("/opt/hl-deadman/engines/python/hl_deadman_guard.py");
    const engineDir = path.join(dir.dir, "engine");
    mkdirSync(engineDir);
    copyFileSync(
      local("/opt/hl-deadman/engines/python/hl_deadman_guard.py"),
      path.join(engineDir, "hl_deadman_guard.py"),
    );
    const code = `${pythonBlock!.text
      .replaceAll(config.guardSocket, socket)
      .replaceAll(placeholder, master.address)}\nimport time\nwhile True:\n    time.sleep(0.05)\n`;
    engine = spawn(python, ["-c", code], { cwd: engineDir, stdio: ["ignore", "pipe", "pipe"] });
    let engineErr = "";
    engine.stderr!.setEncoding("utf8").on("data", (c: string) => {
      engineErr += c;
    });

    // 7. /readyz, at the README's URL (this test's port): 200 once the engine is connected
    const curl = allCommands.find((c) => c[0] === "curl");
    const url = curl!.find((w) => w.includes("/readyz"))!.replace(readmeHealth, health);
    await eventually(async () => (await fetch(url)).status === 200, {
      what: () => `/readyz 200 (engine stderr: ${engineErr})`,
      timeoutMs: 15_000,
    });

    // the engine's own process dies (kill -9 of its pid): the daemon sees it down at once, /readyz turns 503
    engine.kill("SIGKILL");
    await daemon.waitForEvent("guard.engine_down", 10_000);
    await eventually(async () => (await fetch(url)).status === 503, {
      what: "/readyz 503",
      timeoutMs: 10_000,
    });
  }, 90_000);
});
