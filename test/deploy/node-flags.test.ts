/**
 * Node's flags for the long-running daemon (docs/operations.md, "Node flags"). The systemd units are the source:
 * pm2's node_args and the image's ENTRYPOINT carry the same flags. With them the real CLI keeps the switch armed
 * where the kernel refuses writable+executable memory, the rule the units' MemoryDenyWriteExecute=yes asks for
 * (systemd 254 and later apply it with prctl(PR_SET_MDWE) on Linux 6.3 and later). Here a perl one-liner sets that
 * rule and then execs node, so the daemon runs under exactly the kernel's check, without systemd.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { release, tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { requireBinary } from "../helpers/binaries.js";
import { assertBuilt, CLI, fastCadence, ROOT, spawnNode } from "../helpers/process.js";
import { deploymentStarts, imageEntrypoint, nodeFlagsOf, pm2NodeArgs, unitExecStart } from "./deployments.js";
import { parseUnit, unitValue } from "./parsers.js";

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const pkg = JSON.parse(read("package.json")) as { bin: Record<string, string> };

/** The node flags of a unit's ExecStart, heap cap aside (pm2 and the image leave the heap to their host). */
const unitNodeFlags = (path: string): string[] =>
  nodeFlagsOf(unitExecStart(path)).filter((w) => !w.startsWith("--max-old-space-size"));

const FLAGS = unitNodeFlags("systemd/hl-deadman.service");

/** prctl's system call number, per architecture (PR_SET_MDWE is 65, PR_MDWE_REFUSE_EXEC_GAIN is 1). */
const PRCTL: Partial<Record<NodeJS.Architecture, number>> = { x64: 157, arm64: 167 };
const NO_WX = `my $r = syscall(${PRCTL[process.arch] ?? -1}, 65, 1, 0, 0, 0);
if ($r != 0) { print STDERR "prctl(PR_SET_MDWE): $!\\n"; exit 120 }
exec { $ARGV[0] } @ARGV or do { print STDERR "exec $ARGV[0]: $!\\n"; exit 127 };`;

/**
 * Whether this kernel enforces the rule. Linux before 6.3 answers EINVAL (no such prctl): those tests are skipped
 * and say so; every other failure fails them.
 */
function probeNoWx(): { ok: true; perl: string } | { ok: false; why: string } {
  if (PRCTL[process.arch] === undefined)
    return { ok: false, why: `no prctl number known for ${process.arch}` };
  const perl = requireBinary("perl");
  const probe = spawnSync(perl, ["-e", NO_WX, "/bin/true"], { encoding: "utf8" });
  if (probe.status === 0) return { ok: true, perl };
  if (probe.status === 120 && /Invalid argument/.test(probe.stderr))
    return { ok: false, why: `Linux ${release()} has no prctl(PR_SET_MDWE) (Linux 6.3 and later have it)` };
  throw new Error(`the W^X probe failed (exit ${probe.status}): ${probe.stderr}`);
}

describe("node flags of the daemon", () => {
  test("default: the units, pm2 and the image run node with the same flags, --jitless among them", () => {
    expect(FLAGS).toContain("--jitless");
    // Under --jitless node turns WebAssembly off and warns at every start unless the flag says so.
    expect(FLAGS).toContain("--no-expose-wasm");
    // The CPU ceiling's decision (docs/operations.md, "Node flags"): a heap of ~15 MB is collected on the main
    // thread; parallel collection woke three helper threads about once a push.
    expect(FLAGS).toContain("--single-threaded-gc");
    expect(unitNodeFlags("systemd/hl-deadman@.service")).toEqual(FLAGS);
    for (const unit of ["systemd/hl-deadman.service", "systemd/hl-deadman@.service"])
      expect(unitValue(parseUnit(read(unit)), "Service", "MemoryDenyWriteExecute"), unit).toBe("yes");

    expect(pm2NodeArgs()).toEqual(FLAGS);
    expect(imageEntrypoint()).toEqual(["node", ...FLAGS, pkg.bin["hl-deadman"]]);
  });

  test("behavior: under every deployment's flags node has no WebAssembly (so no global fetch) and prints no warning", () => {
    // The decision of docs/operations.md ("Node flags"): --jitless turns WebAssembly off whatever the other flags
    // say (and with it the global fetch and WebSocket, whose HTTP parser is WebAssembly); --no-expose-wasm only
    // says so, without which node warns on stderr at every start.
    const starts = deploymentStarts().filter((s) => s.name !== "npm start");
    expect(starts.map((s) => s.name)).toEqual(
      expect.arrayContaining(["systemd/hl-deadman.service", "pm2", "Dockerfile", "kubernetes"]),
    );
    for (const start of starts) {
      const r = spawnSync(process.execPath, [...start.flags, "-p", "typeof WebAssembly"], {
        encoding: "utf8",
        env: { PATH: process.env.PATH, NODE_OPTIONS: start.nodeOptions ?? "" },
      });
      expect({ out: r.stdout.trim(), err: r.stderr }, start.name).toEqual({ out: "undefined", err: "" });
    }
  });

  describe("under the kernel's W^X rule (PR_SET_MDWE)", () => {
    const noWx = probeNoWx();
    if (!noWx.ok)
      console.warn(`SKIPPED: the W^X process tests of test/deploy/node-flags.test.ts: ${noWx.why}`);
    const via = noWx.ok ? [noWx.perl, "-e", NO_WX] : [];

    let sim: SimulatorHandle;
    let dir: string;
    const wallet = Wallet.createRandom();
    const user = wallet.address.toLowerCase();
    beforeAll(async () => {
      assertBuilt();
      dir = mkdtempSync(join(tmpdir(), "hl-deadman-nowx-"));
      sim = await startSimulator({ users: [{ address: user }] });
    });
    afterAll(async () => {
      await sim?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test.skipIf(!noWx.ok)(
      "behavior: node without the flags aborts at its first compiled function",
      async () => {
        // The rule is real here: the JIT's first executable page is refused and V8 aborts.
        const plain = spawnNode(["-e", "let s = 0; for (let i = 0; i < 1e6; i++) s += i; console.log(s)"], {
          via,
        });
        const { code, signal } = await plain.exitWithin(10_000);
        expect({ code, signal }).not.toEqual({ code: 0, signal: null });
        expect(plain.stderr()).toMatch(/Fatal error|Check failed/);
      },
    );

    test.skipIf(!noWx.ok)(
      "behavior: with the flags the real CLI arms, pushes, polls, serves /metrics, and SIGTERM removes the schedule",
      async () => {
        const env = { PATH: process.env.PATH, HL_PRIVATE_KEY: wallet.privateKey };
        const daemon = spawnNode(
          [
            ...FLAGS,
            CLI,
            "run",
            "--api-url",
            sim.apiUrl,
            "--state-dir",
            join(dir, "state"),
            ...fastCadence("1s"),
            "--health",
            "127.0.0.1:0",
          ],
          { env, via },
        );
        try {
          const listening = await daemon.waitForEvent("health.listening", 10_000);
          await daemon.waitFor(
            (l) =>
              l.event === "heartbeat.ok" &&
              daemon.lines.filter((x) => x.event === "heartbeat.ok").length >= 2,
            10_000,
            "two confirmed pushes",
          );
          await daemon.waitForEvent("exposure", 10_000);
          expect(sim.state.getSchedule(user)).toBeGreaterThan(Date.now());
          const metrics = await (await fetch(new URL("/metrics", String(listening.url)))).text();
          expect(metrics).toMatch(
            /^hl_deadman_armed_deadline_timestamp_seconds\{account="0x[0-9a-f]{40}"\} [1-9]/m,
          );

          daemon.kill("SIGTERM");
          const { code } = await daemon.exitWithin(10_000);
          expect(code, daemon.stderr()).toBe(0);
          expect(sim.state.getSchedule(user)).toBeNull();
          expect(daemon.lines.some((l) => l.event === "shutdown.removed")).toBe(true);
          // No warning either (a flag V8 turned off for us would say so here).
          expect(daemon.stderr()).toBe("");
        } finally {
          daemon.kill("SIGKILL");
        }
      },
      30_000,
    );
  });
});
