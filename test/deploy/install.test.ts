/**
 * The install path the README and docs/operations.md give, done for real: `npm pack`, then
 * `npm install -g --prefix DIR ./hl-deadman-<version>.tgz` and the installed binary run (version, schema, the daemon
 * against its embedded simulator, stopped with SIGINT); and the systemd layout (the tarball unpacked into a
 * directory, `npm install --omit=dev --ignore-scripts`), whose ExecStart path must exist and whose example config
 * must pass `config check`. Needs the npm registry for the dependencies (CI has it); about 15-30 s.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { brokenLinks } from "../docs/markdown.js";
import { spawnNode } from "../helpers/process.js";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
const tmp = mkdtempSync(join(tmpdir(), "hl-deadman-install-"));
const prefix = join(tmp, "prefix");
const optDir = join(tmp, "opt-hl-deadman");

/** The environment for npm and the installed CLI: none of the calling npm's lifecycle or prefix settings, no HL_*. */
function cleanEnv(): NodeJS.ProcessEnv {
  const keep =
    /^npm_config_(registry|cache|userconfig|globalconfig|cafile|strict_ssl|proxy|https_proxy|noproxy)$/i;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) && !keep.test(k)) continue;
    if (/^HL_/.test(k) || k === "CREDENTIALS_DIRECTORY" || k === "STATE_DIRECTORY") continue;
    env[k] = v;
  }
  return env;
}

/** npm itself: the one running `npm test` when there is one, else the npm on the PATH. */
async function npm(args: string[], cwd: string): Promise<string> {
  const execpath = process.env.npm_execpath;
  const [cmd, argv] = execpath?.endsWith(".js") ? [process.execPath, [execpath, ...args]] : ["npm", args];
  try {
    const { stdout } = await run(cmd, argv, { cwd, env: cleanEnv(), timeout: 150_000, maxBuffer: 16 << 20 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(
      `npm ${args.join(" ")} failed (this test needs the npm registry for the dependencies):\n${e.stderr ?? e.message}`,
    );
  }
}

let tarball = "";
let packed: string[] = [];

beforeAll(async () => {
  if (!existsSync(join(root, "dist/bin/hl-deadman.js")))
    throw new Error("dist/ is missing: run `npm run build`");
  // --ignore-scripts: `npm test` has just built dist/; the `prepare` build would rewrite it under running tests.
  const out = await npm(["pack", "--ignore-scripts", "--json", "--pack-destination", tmp], root);
  const [info] = JSON.parse(out) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(tmp, info?.filename ?? "");
  packed = (info?.files ?? []).map((f) => f.path);
  await npm(["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", tarball], tmp);
  mkdirSync(optDir);
  await run("tar", ["-xzf", tarball, "-C", optDir, "--strip-components=1"]);
  await npm(["install", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"], optDir);
}, 300_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("npm pack + npm install -g ./hl-deadman-<version>.tgz", () => {
  test("default: the tarball is hl-deadman-<version>.tgz and ships what the binary and the docs need", () => {
    expect(tarball.endsWith(`hl-deadman-${pkg.version}.tgz`)).toBe(true);
    for (const path of [
      "package.json",
      "README.md",
      "LICENSE",
      "dist/bin/hl-deadman.js",
      "dist/index.js",
      "config/example.json",
      "config/schema.json",
      "systemd/hl-deadman.service",
      "systemd/hl-deadman@.service",
      "systemd/config.example.json",
      "systemd/instance.example.json",
      "systemd/hl-deadman.env.example",
      "docs/operations.md",
      "docs/reliability.md",
    ])
      expect(packed, path).toContain(path);
    expect(
      packed.filter((p) => /^(src|test|bench|node_modules)\//.test(p) || /(^|\/)\.env|\.key$/.test(p)),
    ).toEqual([]);
  });

  test("behavior: every relative link in the installed README and docs resolves inside the package", () => {
    const installed = join(prefix, "lib/node_modules/hl-deadman");
    const docs = packed.filter((p) => p === "README.md" || /^docs\/[^/]+\.md$/.test(p));
    expect(docs.length).toBeGreaterThan(1);
    for (const doc of docs) expect(brokenLinks(join(installed, doc), installed), doc).toEqual([]);
  });

  test("behavior: the installed binary prints the version and the schema the package ships", async () => {
    const bin = join(prefix, "bin/hl-deadman");
    const version = await run(bin, ["--version"], { env: cleanEnv() });
    // the version first, then the commit and the date the build wrote into dist/build-info.json
    expect(version.stdout.trim()).toMatch(
      new RegExp(
        `^${pkg.version.replaceAll(".", "\\.")} \\(commit [0-9a-f]{12}, built \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z\\)$`,
      ),
    );
    const schema = await run(bin, ["config", "schema"], { env: cleanEnv(), maxBuffer: 16 << 20 });
    expect(JSON.parse(schema.stdout)).toEqual(
      JSON.parse(readFileSync(join(root, "config/schema.json"), "utf8")),
    );
  });

  test("behavior: the installed daemon arms the simulator's demo account and removes the schedule on SIGINT", async () => {
    // node runs the installed bin (a symlink to the package's entry), as its shebang would.
    const daemon = spawnNode(
      [
        join(prefix, "bin/hl-deadman"),
        "run",
        "--sim",
        "--health",
        "127.0.0.1:0",
        "--state-dir",
        join(tmp, "state"),
      ],
      { env: cleanEnv() },
    );
    try {
      await daemon.waitForEvent("heartbeat.ok", 15_000);
    } finally {
      daemon.kill("SIGINT");
    }
    expect((await daemon.exitWithin(10_000)).code).toBe(0);
    const names = daemon.lines.map((l) => l.event);
    expect(names).toContain("shutdown.removed");
    expect(names.at(-1)).toBe("shutdown.done");
  }, 30_000);
});

describe("the systemd layout: the tarball unpacked into /opt/hl-deadman (docs/operations.md, step 1)", () => {
  test("behavior: the units' ExecStart script exists there and runs", async () => {
    const unit = readFileSync(join(root, "systemd/hl-deadman.service"), "utf8");
    const script = /^ExecStart=\S+.*?\s\/opt\/hl-deadman\/(\S+)\s/m.exec(unit)?.[1];
    expect(script).toBe("dist/bin/hl-deadman.js");
    const version = await run(process.execPath, [join(optDir, script as string), "--version"], {
      env: cleanEnv(),
    });
    // the version first, then the commit and the date the build wrote into dist/build-info.json
    expect(version.stdout.trim()).toMatch(
      new RegExp(
        `^${pkg.version.replaceAll(".", "\\.")} \\(commit [0-9a-f]{12}, built \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z\\)$`,
      ),
    );
  });

  test("behavior: `config check` passes on the shipped example config with a 0600 key file", async () => {
    const key = join(tmp, "agent.key");
    writeFileSync(key, `0x${randomBytes(32).toString("hex")}\n`, { mode: 0o600 });
    const { stdout } = await run(
      process.execPath,
      [
        join(optDir, "dist/bin/hl-deadman.js"),
        "config",
        "check",
        "--config",
        join(optDir, "systemd/config.example.json"),
        "--key-file",
        key,
      ],
      { env: cleanEnv() },
    );
    expect(stdout).toContain("0x1111111111111111111111111111111111111111");
    expect(stdout).not.toContain(readFileSync(key, "utf8").trim().slice(2));
  });
});
