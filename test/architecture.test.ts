/**
 * The layout's rules (docs/development.md, "Source map"): rooms import only from the rooms below them, no file
 * circles, the producers (switch, watchers, fleet-death, orders, replicas) import no logger, the clock is the only reader of wall time, the runtime the only owner of timers, and app/, cli/ and
 * bin/ the only users of `process`. Each rule is also shown catching a planted bug.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, test } from "vitest";
import { checkArchitecture } from "./helpers/architecture.js";

const SRC = join(import.meta.dirname, "../src");

function sources(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) files.set(relative(SRC, path), readFileSync(path, "utf8"));
    }
  };
  walk(SRC);
  return files;
}

describe("architecture", () => {
  test("default: src/ keeps every rule", () => {
    const files = sources();
    expect(files.size).toBeGreaterThan(90);
    expect(checkArchitecture(files)).toEqual({
      unknownRoom: [],
      forbidden: [],
      wording: [],
      circles: [],
      wallTime: [],
      timers: [],
      process: [],
      long: [],
    });
  });

  test("behavior: each rule catches its planted bug", () => {
    const planted = (edits: Record<string, string>) => {
      const files = sources();
      for (const [file, text] of Object.entries(edits)) files.set(file, `${files.get(file) ?? ""}\n${text}`);
      return checkArchitecture(files);
    };
    expect(planted({ "core/clock.ts": 'import { X } from "../switch/machine.js";' }).forbidden).toEqual([
      "core/clock.ts -> switch/machine.ts",
    ]);
    expect(planted({ "sim/server.ts": 'import type { X } from "../config/options.js";' }).forbidden).toEqual([
      "sim/server.ts -> config/options.ts",
    ]);
    expect(
      planted({ "watchers/guard.ts": 'import type { Metrics } from "../surface/metrics.js";' }).forbidden,
    ).toEqual(["watchers/guard.ts -> surface/metrics.ts"]);
    expect(
      planted({ "watchers/record-read.ts": 'import { readFinding } from "../switch/record.js";' }).forbidden,
    ).toEqual(["watchers/record-read.ts -> switch/record.ts"]);
    // the orders' executors and the switch's machine meet only through the ports in core/ (core/orders-port.ts)
    expect(planted({ "orders/drill-io.ts": 'import { X } from "../drill/machine.js";' }).forbidden).toEqual([
      "orders/drill-io.ts -> drill/machine.ts",
    ]);
    expect(
      planted({ "escalation/machine.ts": 'import { X } from "../orders/close-executor.js";' }).forbidden,
    ).toEqual(["escalation/machine.ts -> orders/close-executor.ts"]);
    // the switch and its features meet only through core/feature.ts: neither imports the other, nor one feature
    // another
    expect(
      planted({ "switch/features.ts": 'import { X } from "../escalation/machine.js";' }).forbidden,
    ).toEqual(["switch/features.ts -> escalation/machine.ts"]);
    expect(planted({ "drill/machine.ts": 'import { X } from "../switch/machine.js";' }).forbidden).toEqual([
      "drill/machine.ts -> switch/machine.ts",
    ]);
    expect(
      planted({ "escalation/machine.ts": 'import { X } from "../drill/machine.js";' }).forbidden,
    ).toEqual(["escalation/machine.ts -> drill/machine.ts"]);
    expect(
      planted({ "switch/driver.ts": 'import type { Metrics } from "../surface/metrics.js";' }).forbidden,
    ).toEqual(["switch/driver.ts -> surface/metrics.ts"]);
    expect(
      planted({ "switch/api.ts": 'import { switchLog } from "../surface/switch/index.js";' }).forbidden,
    ).toEqual(["switch/api.ts -> surface/switch/index.ts"]);
    // the producers publish typed events and word nothing: a logger in one of their rooms is a finding
    expect(
      planted({ "watchers/block-time.ts": 'import type { Logger } from "../core/logger.js";' }).wording,
    ).toEqual(["watchers/block-time.ts -> core/logger.ts"]);
    expect(
      planted({ "switch/ledger.ts": 'import type { Logger } from "../core/logger.js";' }).wording,
    ).toEqual(["switch/ledger.ts -> core/logger.ts"]);
    // app/ and surface/ word: their logger is no finding
    expect(
      planted({ "surface/health.ts": 'import type { Logger } from "../core/logger.js";' }).wording,
    ).toEqual([]);
    expect(
      planted({ "replicas/election.ts": 'import type { Base } from "../app/context.js";' }).forbidden,
    ).toEqual(["replicas/election.ts -> app/context.ts"]);
    expect(
      planted({
        "core/decimal.ts": 'export { X } from "./duration.js";',
        "core/duration.ts": 'import { Y } from "./decimal.js";',
      }).circles,
    ).toEqual([["core/decimal.ts", "core/duration.ts"]]);
    expect(planted({ "switch/ledger.ts": "const t = Date.now();" }).wallTime).toEqual(["switch/ledger.ts"]);
    expect(planted({ "watchers/guard.ts": "setTimeout(() => {}, 1);" }).timers).toEqual([
      "watchers/guard.ts",
    ]);
    expect(planted({ "surface/health.ts": "const pid = process.pid;" }).process).toEqual([
      "surface/health.ts",
    ]);
    expect(planted({ "stray.ts": "", "misc/x.ts": "" }).unknownRoom).toEqual(["misc/x.ts"]);
    // a file grown past MAX_LINES (the option table may)
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `// ${i}`).join("\n");
    expect(planted({ "switch/machine.ts": lines(600) }).long).toEqual(["switch/machine.ts"]);
    expect(planted({ "config/options.ts": lines(600) }).long).toEqual([]);
  });
});
