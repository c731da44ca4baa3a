import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CONFIG_KEYS, loadConfig } from "../../src/config/load.js";
import { DEFAULTS } from "../../src/config/schema.js";
import { GUARD_SOCKET_MODE } from "../../src/watchers/connection-guard.js";
import { requireBinary } from "../helpers/binaries.js";
import { parseTimespan, parseUnit, type UnitFile, unitValue } from "./parsers.js";

const root = resolve(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
const serviceText = read("systemd/hl-deadman.service");
const templateText = read("systemd/hl-deadman@.service");
const service = parseUnit(serviceText);
const template = parseUnit(templateText);

/** The hardening the issue requires, with the exact value each must have. */
const HARDENING: Record<string, string> = {
  NoNewPrivileges: "yes",
  ProtectSystem: "strict",
  ProtectHome: "yes",
  PrivateTmp: "yes",
  PrivateDevices: "yes",
  ProtectKernelTunables: "yes",
  ProtectKernelModules: "yes",
  ProtectKernelLogs: "yes",
  ProtectControlGroups: "yes",
  RestrictAddressFamilies: "AF_INET AF_INET6 AF_UNIX",
  RestrictNamespaces: "yes",
  LockPersonality: "yes",
  SystemCallArchitectures: "native",
  SystemCallFilter: "@system-service",
  CapabilityBoundingSet: "",
};

/** The config file exactly as `hl-deadman run --config FILE` reads it: layering, schema, cross-field rules. */
function loadExample(path: string) {
  const loaded = loadConfig({ options: { config: join(root, path) }, env: {}, cwd: root });
  expect(loaded.warnings, path).toEqual([]);
  return loaded.config;
}

function serviceSection(unit: UnitFile): Map<string, string[]> {
  const section = unit.get("Service");
  if (!section) throw new Error("no [Service] section");
  return section;
}

describe("hl-deadman.service", () => {
  test("default: Type=simple, runs the built CLI with the config file", () => {
    expect(unitValue(service, "Service", "Type")).toBe("simple");
    const exec = unitValue(service, "Service", "ExecStart") ?? "";
    const [node, ...args] = exec.split(/\s+/);
    expect(node).toBe("/usr/bin/node");
    // node's own flags first (test/deploy/node-flags.test.ts), then the script and its arguments.
    expect(args.slice(args.findIndex((a) => !a.startsWith("--")))).toEqual([
      "/opt/hl-deadman/dist/bin/hl-deadman.js",
      "run",
      "--config",
      "/etc/hl-deadman/config.json",
    ]);
    // The path after /opt/hl-deadman is the package's own bin entry.
    const pkg = JSON.parse(read("package.json")) as { bin: Record<string, string> };
    expect(exec).toContain(`/opt/hl-deadman/${pkg.bin["hl-deadman"]}`);
  });

  test("behavior: dedicated user, state directory, key as a credential, env file without secret", () => {
    expect(unitValue(service, "Service", "DynamicUser")).toBe("yes");
    expect(unitValue(service, "Service", "StateDirectory")).toBe("hl-deadman");
    expect(unitValue(service, "Service", "LoadCredential")).toBe("hl-private-key:/etc/hl-deadman/key");
    expect(unitValue(service, "Service", "EnvironmentFile")).toBe("-/etc/hl-deadman/hl-deadman.env");
    const env = serviceSection(service).get("Environment") ?? [];
    expect(env.join(" ")).not.toMatch(/HL_PRIVATE_KEY|0x[0-9a-fA-F]{64}/);
  });

  test("behavior: restarts always, but never after a configuration error (78), and not in a tight loop", () => {
    expect(unitValue(service, "Service", "Restart")).toBe("always");
    expect(parseTimespan(unitValue(service, "Service", "RestartSec") ?? "0")).toBeGreaterThanOrEqual(1000);
    expect((unitValue(service, "Service", "RestartPreventExitStatus") ?? "").split(/\s+/)).toContain("78");
    expect(Number(unitValue(service, "Unit", "StartLimitBurst"))).toBeGreaterThan(1);
    expect(parseTimespan(unitValue(service, "Unit", "StartLimitIntervalSec") ?? "0")).toBeGreaterThan(0);
  });

  test("behavior: SIGTERM, and TimeoutStopSec well above the daemon's shutdown bound", () => {
    expect(unitValue(service, "Service", "KillSignal")).toBe("SIGTERM");
    const stop = parseTimespan(unitValue(service, "Service", "TimeoutStopSec") ?? "0");
    // At least twice the bound and 10 s more: log flush, a slow exchange answer, a loaded host.
    expect(stop).toBeGreaterThanOrEqual(2 * DEFAULTS.shutdownTimeout);
    expect(stop).toBeGreaterThanOrEqual(DEFAULTS.shutdownTimeout + 10_000);
  });

  test("behavior: every required hardening directive, with its value", () => {
    const section = serviceSection(service);
    for (const [key, value] of Object.entries(HARDENING)) {
      expect(section.get(key), key).toBeDefined();
      expect(section.get(key), key).toContain(value);
    }
    // CapabilityBoundingSet= is empty: no capability at all.
    expect(unitValue(service, "Service", "CapabilityBoundingSet")).toBe("");
    const memoryMax = unitValue(service, "Service", "MemoryMax") ?? "";
    expect(memoryMax).toMatch(/^\d+[KMG]$/);
    // No writable+executable memory: possible because node runs without its JIT (the process test under the
    // kernel's rule is test/deploy/node-flags.test.ts). The one without the other would not start.
    expect(unitValue(service, "Service", "MemoryDenyWriteExecute")).toBe("yes");
    expect((unitValue(service, "Service", "ExecStart") ?? "").split(/\s+/)).toContain("--jitless");
    // V8's heap limit stays below MemoryMax so the GC runs before the OOM killer does.
    const heap = /--max-old-space-size=(\d+)/.exec(unitValue(service, "Service", "ExecStart") ?? "");
    expect(Number(heap?.[1])).toBeLessThan(Number.parseInt(memoryMax, 10));
  });

  test("behavior: waits for the network", () => {
    expect(service.get("Unit")?.get("After")).toContain("network-online.target");
    expect(service.get("Unit")?.get("Wants")).toContain("network-online.target");
    expect(unitValue(service, "Install", "WantedBy")).toBe("multi-user.target");
  });
});

describe("hl-deadman@.service", () => {
  test("default: one instance per account from /etc/hl-deadman/%i.json, own state, own key", () => {
    expect(unitValue(template, "Service", "ExecStart")).toMatch(/ run --config \/etc\/hl-deadman\/%i\.json$/);
    expect(unitValue(template, "Service", "StateDirectory")).toBe("hl-deadman/%i");
    expect(unitValue(template, "Service", "LoadCredential")).toBe("hl-private-key:/etc/hl-deadman/%i.key");
    expect(template.get("Service")?.get("EnvironmentFile")).toEqual([
      "-/etc/hl-deadman/hl-deadman.env",
      "-/etc/hl-deadman/%i.env",
    ]);
  });

  test("behavior: the same supervision and hardening as the single unit", () => {
    const single = serviceSection(service);
    const instance = serviceSection(template);
    const perInstance = new Set(["ExecStart", "StateDirectory", "LoadCredential", "EnvironmentFile"]);
    for (const [key, values] of single) {
      if (perInstance.has(key)) continue;
      expect(instance.get(key), key).toEqual(values);
    }
    expect([...instance.keys()].sort()).toEqual([...single.keys()].sort());
    expect(template.get("Unit")?.get("StartLimitBurst")).toEqual(service.get("Unit")?.get("StartLimitBurst"));
    // The command differs only in the config path.
    expect(unitValue(template, "Service", "ExecStart")).toBe(
      unitValue(service, "Service", "ExecStart")?.replace(
        "/etc/hl-deadman/config.json",
        "/etc/hl-deadman/%i.json",
      ),
    );
  });
});

describe("configuration examples", () => {
  test("default: config.example.json loads through the config loader without a warning", () => {
    const config = loadExample("systemd/config.example.json");
    expect(config.health).toBe(DEFAULTS.health);
    expect(config.interval).toBe(15_000);
    expect(config.deadline).toBe(60_000);
    expect(config.keyFile).toBeUndefined();
  });

  test("behavior: an instance config has its own health port and a vault", () => {
    const single = loadExample("systemd/config.example.json");
    const instance = loadExample("systemd/instance.example.json");
    expect(instance.vault).toMatch(/^0x[0-9a-f]{40}$/);
    expect(instance.health.split(":").at(-1)).not.toBe(single.health.split(":").at(-1));
  });

  test("behavior: the environment file example holds no secret and names only known variables", () => {
    const text = read("systemd/hl-deadman.env.example");
    expect(text).not.toMatch(/^#?\s*HL_PRIVATE_KEY=/m);
    expect(text).not.toMatch(/0x[0-9a-fA-F]{64}/);
    const known = new Set(CONFIG_KEYS.flatMap((k) => k.env));
    const named = [...text.matchAll(/^#?(HL_[A-Z_]+)=/gm)].map((m) => m[1] as string);
    expect(named.length).toBeGreaterThan(3);
    for (const name of named) expect(known, name).toContain(name);
  });
});

// ---------------------------------------------------------------- systemd-analyze

const GUARD_DROP_IN = "systemd/hl-deadman.service.d/guard-socket.conf";
const GUARD_TEMPLATE_DROP_IN = "systemd/hl-deadman@.service.d/guard-socket.conf";

describe('the connection guard\'s drop-ins (docs/operations.md, "Cancel on disconnect")', () => {
  test("default: a runtime directory the engine's group may enter, the socket in it, the daemon's socket 0660", () => {
    for (const [file, runtime, socket] of [
      [GUARD_DROP_IN, "hl-deadman", "/run/hl-deadman/guard.sock"],
      [GUARD_TEMPLATE_DROP_IN, "hl-deadman-%i", "/run/hl-deadman-%i/guard.sock"],
    ] as const) {
      const unit = parseUnit(read(file));
      expect(unitValue(unit, "Service", "Group"), file).toBe("hl-deadman-engine");
      expect(unitValue(unit, "Service", "RuntimeDirectory"), file).toBe(runtime);
      expect(unitValue(unit, "Service", "RuntimeDirectoryMode"), file).toBe("0750");
      expect(unitValue(unit, "Service", "Environment"), file).toBe(`HL_GUARD_SOCKET=${socket}`);
      expect(
        loadConfig({ options: {}, env: { HL_GUARD_SOCKET: socket }, cwd: root }).config.guardSocket,
      ).toBe(socket);
    }
    expect(GUARD_SOCKET_MODE).toBe(0o660);
  });
});

describe("systemd-analyze", () => {
  // a missing program fails every check below with the install command (.ci/run installs it), never skips
  beforeAll(() => {
    requireBinary("systemd-analyze");
  });
  const dir = mkdtempSync(join(tmpdir(), "hl-deadman-units-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The shipped unit with its paths pointed at this checkout, so verify can check that ExecStart exists. */
  function localCopy(text: string, name: string): string {
    const local = text
      .replace("/usr/bin/node ", `${process.execPath} `)
      .replaceAll("/opt/hl-deadman/dist/bin/hl-deadman.js", join(root, "dist/bin/hl-deadman.js"))
      .replace("WorkingDirectory=/opt/hl-deadman", `WorkingDirectory=${root}`);
    const path = join(dir, name);
    writeFileSync(path, local);
    return path;
  }

  function verify(path: string) {
    return spawnSync("systemd-analyze", ["verify", path], { encoding: "utf8", cwd: dir, timeout: 15_000 });
  }

  test("default: hl-deadman.service verifies without a warning", () => {
    const result = verify(localCopy(serviceText, "hl-deadman.service"));
    expect(result.stderr + result.stdout).toBe("");
    expect(result.status).toBe(0);
  });

  test("default: the template verifies, as a template and as an instance", () => {
    for (const name of ["hl-deadman@.service", "hl-deadman@desk-a.service"]) {
      const result = verify(localCopy(templateText, name));
      expect(result.stderr + result.stdout, name).toBe("");
      expect(result.status, name).toBe(0);
    }
  });

  /** The unit with the connection guard's drop-in next to it (verify reads `<unit>.d/` beside the unit file). */
  function withDropIn(unitText: string, unitName: string, dropInDir: string, dropIn: string): string {
    const path = localCopy(unitText, unitName);
    mkdirSync(join(dir, `${dropInDir}.d`), { recursive: true });
    writeFileSync(join(dir, `${dropInDir}.d`, "guard-socket.conf"), dropIn);
    return path;
  }

  test("default: the connection guard's drop-ins verify with their units; a broken drop-in is caught", () => {
    const service = withDropIn(serviceText, "hl-deadman.service", "hl-deadman.service", read(GUARD_DROP_IN));
    let result = verify(service);
    expect(result.stderr + result.stdout).toBe("");
    expect(result.status).toBe(0);
    for (const name of ["hl-deadman@.service", "hl-deadman@desk-a.service"]) {
      result = verify(withDropIn(templateText, name, "hl-deadman@.service", read(GUARD_TEMPLATE_DROP_IN)));
      expect(result.stderr + result.stdout, name).toBe("");
      expect(result.status, name).toBe(0);
    }
    // the drop-in is read: a misspelt key in it is reported
    const broken = withDropIn(
      serviceText,
      "hl-deadman.service",
      "hl-deadman.service",
      read(GUARD_DROP_IN).replace("RuntimeDirectoryMode=", "RuntimeDirectoryMod="),
    );
    expect(verify(broken).stderr).toContain("Unknown key 'RuntimeDirectoryMod'");
    rmSync(join(dir, "hl-deadman.service.d"), { recursive: true, force: true });
    rmSync(join(dir, "hl-deadman@.service.d"), { recursive: true, force: true });
  });

  test("error: verify does catch a broken unit (the check can fail)", () => {
    const broken = serviceText.replace(
      "KillSignal=SIGTERM",
      "KillSignal=SIGTERMX\nRestartPreventExitStatuz=78",
    );
    const result = verify(localCopy(broken, "broken.service"));
    expect(result.stderr).toContain("Failed to parse signal name");
    expect(result.stderr).toContain("Unknown key 'RestartPreventExitStatuz'");
    const missing = verify(
      localCopy(serviceText.replace("/usr/bin/node ", "/nonexistent/node "), "missing.service"),
    );
    expect(missing.status).not.toBe(0);
  });

  test("behavior: systemd-analyze security rates the unit's exposure low (at most 2.0 of 10)", () => {
    for (const [text, name] of [
      [serviceText, "hl-deadman.service"],
      [templateText, "hl-deadman@desk-a.service"],
    ] as const) {
      const path = localCopy(text, name);
      const result = spawnSync("systemd-analyze", ["security", "--offline=yes", "--no-pager", path], {
        encoding: "utf8",
        cwd: dir,
        timeout: 15_000,
      });
      if (/unrecognized option|unknown option/i.test(result.stderr)) {
        console.warn(
          `systemd-analyze security --offline is not supported here (systemd < 250): ${result.stderr}`,
        );
        return;
      }
      const level = /Overall exposure level for \S+: (\d+\.\d+)/.exec(result.stdout);
      expect(level, result.stdout + result.stderr).not.toBeNull();
      expect(Number(level?.[1])).toBeLessThanOrEqual(2.0);
      // systemd's own reading of MemoryDenyWriteExecute=yes: no writable+executable mappings.
      expect(result.stdout).toMatch(/^✓ MemoryDenyWriteExecute=/m);
    }
  });
});
