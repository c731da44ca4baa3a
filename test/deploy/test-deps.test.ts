/**
 * The README's one test command on a fresh machine (issue 31, item 8): `npm test`'s pre-step
 * (scripts/test-deps.sh) installs the Debian programs the tests drive when one is missing, with root or sudo -n,
 * and without either names the command and fails. Here apt-get and the programs are stand-ins on a PATH of our
 * own; the script itself is the real one.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SCRIPT = path.join(ROOT, "scripts/test-deps.sh");
const PACKAGES = [
  "systemd",
  "prometheus",
  "prometheus-alertmanager",
  "chromium",
  "etcd-server",
  "socat",
  "python3",
];

/** A PATH holding only `id` (and what `extra` adds): every program the tests drive is missing. */
function barePath(extra: Record<string, string> = {}): { dir: string; log: string } {
  // a stand-in body may write LOG: the file of calls
  const dir = mkdtempSync(path.join(tmpdir(), "hl-test-deps-"));
  symlinkSync("/usr/bin/id", path.join(dir, "id"));
  const log = path.join(dir, "calls.log");
  writeFileSync(log, "");
  chmodSync(dir, 0o755);
  chmodSync(log, 0o666);
  for (const [name, body] of Object.entries(extra)) {
    writeFileSync(path.join(dir, name), `#!/bin/sh\n${body.replaceAll("LOG", log)}\n`);
    chmodSync(path.join(dir, name), 0o755);
  }
  return { dir, log };
}

const run = (PATH: string, uid?: number, env: Record<string, string> = {}) =>
  spawnSync("/bin/sh", [SCRIPT], {
    env: { PATH, ...env },
    encoding: "utf8",
    ...(uid === undefined ? {} : { uid, gid: uid }),
  });

describe("scripts/test-deps.sh (npm test's pre-step)", () => {
  test("default: on this machine every program is there: nothing to do, no output", () => {
    const r = run(process.env.PATH ?? "/usr/bin:/bin");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  test("behavior: as root, the missing packages are installed with apt-get", () => {
    const { dir, log } = barePath({ "apt-get": `echo "$*" >> LOG` });
    const r = run(dir);
    expect(r.status, r.stderr).toBe(0);
    const calls = readFileSync(log, "utf8").trim().split("\n");
    expect(calls[0]).toBe("update -qq");
    for (const p of PACKAGES) expect(calls[1]?.split(" ")).toContain(p);
    expect(r.stderr).toContain("installing as root");
    // it says which tests need each package, and how to decline, before it installs
    expect(r.stderr).toMatch(/\n {2}socat: runs the shell engine/);
    expect(r.stderr).toMatch(/\n {2}etcd-server: a real etcd for the replica-coordination tests/);
    expect(r.stderr).toContain("HL_DEADMAN_TEST_DEPS=print");
  });

  test("behavior: HL_DEADMAN_TEST_DEPS=print declines: the command is printed with the reasons, nothing installed", () => {
    const { dir, log } = barePath({ "apt-get": `echo "$*" >> LOG` });
    const r = run(dir, undefined, { HL_DEADMAN_TEST_DEPS: "print" });
    expect(r.status).toBe(1);
    expect(readFileSync(log, "utf8")).toBe("");
    expect(r.stderr).toContain("nothing installed");
    expect(r.stderr).toMatch(/sudo apt-get install -y --no-install-recommends .*socat python3/);
    expect(r.stderr).toMatch(/\n {2}python3: runs the Python engine module/);
  });

  test("error: without root or a password-less sudo, the command to run is named and the step fails", () => {
    if (process.getuid?.() !== 0) throw new Error("this test drops to uid 65534 and needs to start as root");
    const { dir, log } = barePath({ "apt-get": `echo "$*" >> LOG`, sudo: "exit 1" });
    const r = run(dir, 65534);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("needs root (or a password-less sudo)");
    expect(r.stderr).toMatch(/sudo apt-get install -y --no-install-recommends .*prometheus-alertmanager/);
    expect(readFileSync(log, "utf8")).toBe("");
  });

  test("behavior: npm test runs it first, and .ci/run runs npm test", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.pretest).toBe("sh scripts/test-deps.sh");
    expect(readFileSync(path.join(ROOT, ".ci/run"), "utf8")).toMatch(
      /VITEST_JSON_REPORT="\$report" npm test\n/,
    );
  });
});
