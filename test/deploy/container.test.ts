import { execFile, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, posix, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseGuardSocket } from "../../src/config/listen.js";
import { loadConfig } from "../../src/config/load.js";
import { ConfigSchema, DEFAULTS } from "../../src/config/schema.js";
import {
  type DockerStage,
  dockerEnv,
  execForm,
  instructions,
  parseDockerfile,
  parseYamlDocuments,
  type Yaml,
} from "./parsers.js";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

const dockerfile = parseDockerfile(read("Dockerfile"));
const build = dockerfile.stages[0] as DockerStage;
const runtime = dockerfile.stages.at(-1) as DockerStage;
const env = dockerEnv(runtime);

// ---- the Kubernetes example, reduced to the parts the tests need
type Obj = { [key: string]: Yaml };
const obj = (v: Yaml | undefined): Obj => {
  if (v === null || v === undefined || typeof v !== "object" || Array.isArray(v))
    throw new Error("not a mapping");
  return v;
};
const list = (v: Yaml | undefined): Obj[] => {
  if (!Array.isArray(v)) throw new Error("not a sequence");
  return v.map(obj);
};
const docs = parseYamlDocuments(read("deploy/kubernetes/sidecar.yaml")).map(obj);
const deployment = docs.find((d) => d.kind === "Deployment") as Obj;
const podSpec = obj(obj(obj(deployment.spec).template).spec);
const sidecar = list(podSpec.initContainers).find((c) => c.name === "hl-deadman") as Obj;
const sidecarEnv = new Map(list(sidecar.env).map((e) => [e.name as string, e.value as string]));
const mounts = list(sidecar.volumeMounts);
const volumes = list(podSpec.volumes);
const volumeOf = (mountPath: string) => {
  const mount = mounts.find((m) => m.mountPath === mountPath);
  if (!mount) throw new Error(`no volumeMount at ${mountPath}`);
  return { mount, volume: volumes.find((v) => v.name === mount.name) as Obj };
};

/** The port a probe targets, resolving a named port through the container's ports. */
function probePort(probe: Obj): number {
  const port = obj(probe.httpGet).port;
  if (typeof port === "number") return port;
  const named = list(sidecar.ports).find((p) => p.name === port);
  return named?.containerPort as number;
}

const portOf = (hostPort: string) => Number(hostPort.split(":").at(-1));

describe("Dockerfile", () => {
  test("default: two stages on node:20-bookworm-slim; build runs npm ci, build, prune --omit=dev", () => {
    expect(dockerfile.stages).toHaveLength(2);
    for (const stage of dockerfile.stages) expect(stage.from).toBe("node:20-bookworm-slim");
    const runs = instructions(build, "RUN").map((i) => i.args);
    const all = runs.join(" && ");
    expect(all).toMatch(/npm ci\b/);
    expect(all).toMatch(/npm run build\b/);
    expect(all).toMatch(/npm prune --omit=dev\b/);
    // Prune comes after the build, which needs the dev dependencies (typescript).
    expect(all.indexOf("npm prune")).toBeGreaterThan(all.indexOf("npm run build"));
  });

  test("behavior: the runtime stage copies only dist/, package*.json and the pruned node_modules", () => {
    const sources: string[] = [];
    for (const copy of instructions(runtime, "COPY")) {
      expect(copy.flags.get("from"), "every runtime COPY comes from the build stage").toBe(build.name);
      sources.push(...copy.args.split(/\s+/).slice(0, -1));
    }
    expect(sources.sort()).toEqual([
      "/app/dist",
      "/app/node_modules",
      "/app/package-lock.json",
      "/app/package.json",
    ]);
    expect(instructions(runtime, "ADD")).toEqual([]);
    // No install in the runtime stage: nothing but what the build stage pruned.
    expect(
      instructions(runtime, "RUN")
        .map((i) => i.args)
        .join(" "),
    ).not.toMatch(/npm (ci|install|i)\b/);
    expect(env.get("NODE_ENV")).toBe("production");
  });

  test("behavior: non-root user, /app, SIGTERM, exec-form entry point running the built CLI", () => {
    const user = instructions(runtime, "USER").at(-1)?.args;
    expect(user).toBeDefined();
    expect(["root", "0", "0:0"]).not.toContain(user);
    expect(instructions(runtime, "WORKDIR").at(-1)?.args).toBe("/app");
    expect(instructions(runtime, "STOPSIGNAL").at(-1)?.args).toBe("SIGTERM");
    const entry = execForm(instructions(runtime, "ENTRYPOINT").at(-1)?.args ?? "");
    const pkg = JSON.parse(read("package.json")) as { bin: Record<string, string> };
    // node, its flags (the systemd units' own, test/deploy/node-flags.test.ts), the built CLI.
    expect(entry?.[0]).toBe("node");
    expect(entry?.at(-1)).toBe(pkg.bin["hl-deadman"]);
    expect(entry?.slice(1, -1).every((a) => a.startsWith("--"))).toBe(true);
    expect(execForm(instructions(runtime, "CMD").at(-1)?.args ?? "")).toEqual(["run"]);
  });

  test("behavior: state volume, health port and key path agree with each other", () => {
    expect(instructions(runtime, "VOLUME").map((i) => i.args)).toEqual([env.get("HL_STATE_DIR")]);
    expect(env.get("HL_STATE_DIR")).toBe("/var/lib/hl-deadman");
    // The volume's directory is created and handed to the non-root user before VOLUME.
    const prep = instructions(runtime, "RUN")
      .map((i) => i.args)
      .join(" ");
    expect(prep).toContain(`chown ${instructions(runtime, "USER").at(-1)?.args}`);
    expect(prep).toContain(env.get("HL_STATE_DIR"));

    const health = env.get("HL_HEALTH") ?? "";
    expect(ConfigSchema.shape.health.parse(health)).toBe(health);
    expect(health.startsWith("0.0.0.0:")).toBe(true);
    const port = portOf(health);
    expect(instructions(runtime, "EXPOSE").map((i) => Number(i.args))).toEqual([port]);
    const check = instructions(runtime, "HEALTHCHECK").at(-1)?.args ?? "";
    expect(check).toContain(`http://127.0.0.1:${port}/healthz`);
    // Same default port as the daemon's own default.
    expect(port).toBe(portOf(DEFAULTS.health));

    expect(env.get("CREDENTIALS_DIRECTORY")).toBe("/run/secrets");
  });

  test("behavior: .dockerignore keeps build output, dependencies, git and key material out of the context", () => {
    const ignored = read(".dockerignore")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#"));
    for (const entry of ["node_modules", "dist", ".git", "*.key", ".env", "test"])
      expect(ignored).toContain(entry);
    // ...but never what the build stage copies.
    for (const needed of [
      "src",
      "package.json",
      "package-lock.json",
      "tsconfig.json",
      "tsconfig.build.json",
      "scripts",
    ]) {
      expect(ignored).not.toContain(needed);
    }
  });
});

describe("Dockerfile: the commands really run", () => {
  const entry = execForm(instructions(runtime, "ENTRYPOINT").at(-1)?.args ?? "") ?? [];
  const cli = join(root, entry.at(-1) ?? "missing");

  beforeAll(() => {
    if (!existsSync(cli)) {
      const built = spawnSync(process.execPath, [join(root, "scripts/build.mjs")], {
        cwd: root,
        encoding: "utf8",
      });
      if (built.status !== 0) throw new Error(`build failed: ${built.stdout}${built.stderr}`);
    }
  }, 120_000);

  test("default: the entry point exists after the build and its --help lists `run`", async () => {
    expect(existsSync(cli)).toBe(true);
    // As the image runs it: the entry point's node flags, the CLI, then the command.
    const { stdout } = await run(process.execPath, [...entry.slice(1, -1), cli, "--help"], {
      cwd: root,
      timeout: 15_000,
    });
    expect(stdout).toMatch(/^\s+run\b/m);
    expect(stdout).toContain("hl-deadman");
  });

  test("behavior: dist/ with the production dependencies only (what the runtime stage holds) runs", async () => {
    // The runtime stage = dist/ + package*.json + `npm prune --omit=dev`'d node_modules. Rebuild that tree in a temp
    // dir (production packages linked from the lockfile) so an import of a devDependency from dist/ fails here.
    const app = mkdtempSync(join(tmpdir(), "hl-deadman-image-"));
    try {
      cpSync(join(root, "dist"), join(app, "dist"), { recursive: true });
      cpSync(join(root, "package.json"), join(app, "package.json"));
      const lock = JSON.parse(read("package-lock.json")) as {
        packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
      };
      const production = Object.entries(lock.packages)
        .filter(
          ([path, meta]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) && !meta.dev && !meta.devOptional,
        )
        .map(([path]) => path);
      expect(production).toContain("node_modules/ethers");
      expect(production).not.toContain("node_modules/typescript");
      for (const path of production) {
        mkdirSync(dirname(join(app, path)), { recursive: true });
        symlinkSync(join(root, path), join(app, path), "dir");
      }
      const help = await run(process.execPath, ["dist/bin/hl-deadman.js", "--help"], {
        cwd: app,
        timeout: 15_000,
      });
      expect(help.stdout).toMatch(/^\s+run\b/m);
      await run(process.execPath, ["--input-type=module", "-e", "await import('./dist/index.js')"], {
        cwd: app,
        timeout: 15_000,
      });
      // etcd3 (and gRPC) is an optional peer, not a production dependency: without it, what needs it says how to
      // install it and exits 78, instead of a module-not-found stack
      expect(production).not.toContain("node_modules/etcd3");
      const replicas = await run(
        process.execPath,
        ["dist/bin/hl-deadman.js", "replicas", "list", "--coordinate", "etcd://127.0.0.1:1"],
        { cwd: app, timeout: 15_000 },
      ).then(
        () => ({ code: 0, stderr: "" }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );
      expect(replicas.code).toBe(78);
      expect(replicas.stderr).toContain("needs the optional package etcd3, which is not installed");
      expect(replicas.stderr).toContain("npm install -g etcd3@1.1.2");
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  describe("HEALTHCHECK", () => {
    let server: Server;
    let status = 200;
    let url = "";
    beforeAll(async () => {
      server = createServer((req, res) => {
        res.writeHead(req.url === "/healthz" ? status : 404, { "content-type": "application/json" });
        res.end(JSON.stringify({ status: status === 200 ? "ok" : "down" }));
      });
      await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

    /** Runs the image's HEALTHCHECK command with its URL pointed at the local server (never port 9464 here). */
    async function healthcheck(target: string): Promise<number> {
      const command = execForm(
        (instructions(runtime, "HEALTHCHECK").at(-1)?.args ?? "").replace(/^(--\S+\s+)*CMD\s+/, ""),
      );
      expect(command?.[0]).toBe("node");
      const args = (command ?? []).slice(1).map((a) => a.replace(/http:\/\/127\.0\.0\.1:\d+/, target));
      try {
        await run(process.execPath, args, { timeout: 10_000 });
        return 0;
      } catch (error) {
        return (error as { code: number }).code;
      }
    }

    test("default: exit 0 while /healthz answers 200", async () => {
      status = 200;
      expect(await healthcheck(url)).toBe(0);
    });

    test("error: exit 1 when /healthz answers 503", async () => {
      status = 503;
      expect(await healthcheck(url)).toBe(1);
    });

    test("error: exit 1 when nothing listens", async () => {
      const closed = createServer();
      await new Promise<void>((ok) => closed.listen(0, "127.0.0.1", ok));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((ok) => closed.close(() => ok()));
      expect(await healthcheck(`http://127.0.0.1:${port}`)).toBe(1);
    });
  });
});

describe("deploy/kubernetes/sidecar.yaml", () => {
  test("default: hl-deadman is a native sidecar (initContainers, restartPolicy: Always) next to the engine", () => {
    expect(sidecar.restartPolicy).toBe("Always");
    expect(list(podSpec.containers).length).toBeGreaterThanOrEqual(1);
    expect(list(podSpec.containers).some((c) => c.name === "hl-deadman")).toBe(false);
    // One copy of the switch per key: one replica, and no rolling update that would briefly run two.
    const spec = obj(deployment.spec);
    expect(spec.replicas).toBe(1);
    expect(obj(spec.strategy).type).toBe("Recreate");
  });

  test("behavior: probes: liveness /healthz, readiness /readyz, a startup probe, all on the daemon's port", () => {
    expect(obj(obj(sidecar.livenessProbe).httpGet).path).toBe("/healthz");
    expect(obj(obj(sidecar.readinessProbe).httpGet).path).toBe("/readyz");
    const startup = obj(sidecar.startupProbe);
    expect(["/healthz", "/readyz"]).toContain(obj(startup.httpGet).path);
    const health = sidecarEnv.get("HL_HEALTH") ?? env.get("HL_HEALTH") ?? "";
    for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) {
      expect(probePort(obj(sidecar[probe])), probe).toBe(portOf(health));
    }
    // The same port the image exposes and health-checks.
    expect(portOf(health)).toBe(Number(instructions(runtime, "EXPOSE").at(-1)?.args));
  });

  test("behavior: the connection guard on loopback TCP, the engine pointed at the same address", () => {
    const guard = sidecarEnv.get("HL_GUARD_SOCKET");
    expect(guard).toBe("127.0.0.1:9470");
    expect(parseGuardSocket(guard!)).toEqual({ kind: "tcp", host: "127.0.0.1", port: 9470 });
    const engine = list(podSpec.containers).find((c) => c.name === "engine") as Obj;
    const engineEnv = new Map(list(engine.env).map((e) => [e.name as string, e.value as string]));
    expect(engineEnv.get("HL_DEADMAN_GUARD")).toBe(guard);
  });

  test("behavior: terminationGracePeriodSeconds is well above the shutdown bound", () => {
    const grace = podSpec.terminationGracePeriodSeconds as number;
    expect(grace * 1000).toBeGreaterThanOrEqual(2 * DEFAULTS.shutdownTimeout);
    expect(grace * 1000).toBeGreaterThanOrEqual(DEFAULTS.shutdownTimeout + 10_000);
    // The configured shutdownTimeout (ConfigMap) fits as well.
    const config = configMapConfig();
    expect(grace * 1000).toBeGreaterThan(config.shutdownTimeout + 10_000);
  });

  test("behavior: the key comes from a Secret mounted read-only as a file at the image's credential path", () => {
    const keyPath = posix.join(
      sidecarEnv.get("CREDENTIALS_DIRECTORY") ?? env.get("CREDENTIALS_DIRECTORY") ?? "",
      "hl-private-key",
    );
    expect(keyPath).toBe("/run/secrets/hl-private-key");
    const { mount, volume } = volumeOf(keyPath);
    expect(mount.readOnly).toBe(true);
    expect(mount.subPath).toBe("hl-private-key");
    expect(obj(volume.secret).secretName).toBeTypeOf("string");
    // Never in the environment.
    expect(sidecarEnv.has("HL_PRIVATE_KEY")).toBe(false);
    expect(read("deploy/kubernetes/sidecar.yaml")).not.toMatch(/0x[0-9a-fA-F]{64}/);
  });

  test("behavior: the ledger lives on a persistent volume at the image's state directory", () => {
    const stateDir = sidecarEnv.get("HL_STATE_DIR") ?? env.get("HL_STATE_DIR") ?? "";
    expect(stateDir).toBe(env.get("HL_STATE_DIR"));
    expect(instructions(runtime, "VOLUME").at(-1)?.args).toBe(stateDir);
    const { volume } = volumeOf(stateDir);
    const claim = obj(volume.persistentVolumeClaim).claimName;
    expect(docs.some((d) => d.kind === "PersistentVolumeClaim" && obj(d.metadata).name === claim)).toBe(true);
  });

  test("behavior: non-root, read-only root filesystem, no privilege escalation, resource limits", () => {
    const sc = obj(sidecar.securityContext);
    const podSc = obj(podSpec.securityContext);
    expect(sc.runAsNonRoot ?? podSc.runAsNonRoot).toBe(true);
    expect(sc.readOnlyRootFilesystem).toBe(true);
    expect(sc.allowPrivilegeEscalation).toBe(false);
    expect(obj(sc.capabilities).drop).toEqual(["ALL"]);
    // The image's USER node is uid 1000 in the official node images.
    expect(sc.runAsUser ?? podSc.runAsUser).toBe(1000);
    expect(obj(obj(sidecar.resources).limits).memory).toMatch(/^\d+(Mi|Gi)$/);
    expect(obj(obj(sidecar.resources).requests).cpu).toBeDefined();
  });

  test("behavior: the sidecar runs the image's `run` with the mounted config, which the schema accepts", () => {
    const args = sidecar.args as string[];
    expect(args[0]).toBe("run");
    const configPath = args[args.indexOf("--config") + 1] as string;
    const { volume } = volumeOf(posix.dirname(configPath));
    const configMap = docs.find(
      (d) => d.kind === "ConfigMap" && obj(d.metadata).name === obj(volume.configMap).name,
    );
    expect(obj(configMap?.data)[posix.basename(configPath)]).toBeTypeOf("string");
    const config = configMapConfig();
    expect(config.accounts.length).toBeGreaterThan(0);
  });
});

/** The ConfigMap's config.json exactly as `hl-deadman run --config` reads it (written to a temp file). */
function configMapConfig() {
  const configMap = docs.find((d) => d.kind === "ConfigMap") as Obj;
  const dir = mkdtempSync(join(tmpdir(), "hl-deadman-k8s-"));
  try {
    const file = join(dir, "config.json");
    writeFileSync(file, obj(configMap.data)["config.json"] as string);
    const loaded = loadConfig({ options: { config: file }, env: {}, cwd: dir });
    expect(loaded.warnings).toEqual([]);
    return loaded.config;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
