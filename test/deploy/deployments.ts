/**
 * How each shipped deployment starts node for the daemon, read from the deployment files themselves: the systemd
 * units' ExecStart=, pm2's node_args, the image's ENTRYPOINT and the Kubernetes example's NODE_OPTIONS
 * (docs/operations.md, "Node flags"). Used by test/deploy/node-flags.test.ts and by bench/run.mjs (through tsx), so
 * the benchmarks run what ships.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ROOT } from "../helpers/process.js";
import { execForm, instructions, parseDockerfile, parseUnit, unitValue } from "./parsers.js";

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** A way node is started: its flags and NODE_OPTIONS. */
export type NodeStart = { name: string; flags: string[]; nodeOptions?: string };

/** The node flags of a command: the words between the node binary and the script (the first word ending in .js). */
export function nodeFlagsOf(command: readonly string[]): string[] {
  const script = command.findIndex((w) => w.endsWith(".js"));
  if (script < 1) throw new Error(`no script after the node binary in: ${command.join(" ")}`);
  return command.slice(1, script);
}

/** A unit's ExecStart=, split into words. */
export function unitExecStart(path: string): string[] {
  return (unitValue(parseUnit(read(path)), "Service", "ExecStart") ?? "").split(/\s+/);
}

/** The image's ENTRYPOINT (exec form) in the Dockerfile's last stage. */
export function imageEntrypoint(): string[] {
  const runtime = parseDockerfile(read("Dockerfile")).stages.at(-1);
  if (!runtime) throw new Error("no stage in the Dockerfile");
  const entry = execForm(instructions(runtime, "ENTRYPOINT").at(-1)?.args ?? "");
  if (!entry) throw new Error("the Dockerfile's ENTRYPOINT is not in exec form");
  return entry;
}

/** pm2's node_args for the app in ecosystem.config.cjs. */
export function pm2NodeArgs(): string[] | undefined {
  const pm2 = createRequire(import.meta.url)(join(ROOT, "ecosystem.config.cjs")) as {
    apps: { node_args?: string[] }[];
  };
  return pm2.apps[0]?.node_args;
}

/** Every way the deployments (and `npm start`) start node. */
export function deploymentStarts(): NodeStart[] {
  const imageFlags = nodeFlagsOf(imageEntrypoint());
  const k8sOptions = /name: NODE_OPTIONS\s+value: (.+)/.exec(read("deploy/kubernetes/sidecar.yaml"))?.[1];
  if (!k8sOptions) throw new Error("no NODE_OPTIONS in deploy/kubernetes/sidecar.yaml");
  return [
    { name: "npm start", flags: [] },
    ...["systemd/hl-deadman.service", "systemd/hl-deadman@.service"].map((unit) => ({
      name: unit,
      flags: nodeFlagsOf(unitExecStart(unit)),
    })),
    { name: "pm2", flags: pm2NodeArgs() ?? [] },
    { name: "Dockerfile", flags: imageFlags },
    { name: "kubernetes", flags: imageFlags, nodeOptions: k8sOptions.trim() },
  ];
}
