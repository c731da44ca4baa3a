import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { auditSubscriber } from "../../src/surface/audit/events.js";
import {
  AUDIT_TYPE_PREFIX,
  chainRecord,
  GENESIS,
  GENESIS_HASH,
  parseRecordLine,
  sha256Hex,
  verifyTrail,
} from "../../src/surface/audit/record.js";
import {
  AuditTrail,
  CURRENT_FILE,
  MANIFEST_FILE,
  readManifest,
  verifyAuditDir,
} from "../../src/surface/audit/trail.js";

const T0 = Date.UTC(2026, 10, 26, 12, 0, 0);
const A = "0x1111111111111111111111111111111111111111";
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "hl-audit-"));
  dirs.push(d);
  return join(d, "audit");
}
async function openTrail(dir: string, over: { maxFileBytes?: number; keepFiles?: number } = {}) {
  let t = T0;
  const errors: Error[] = [];
  const trail = await AuditTrail.open({
    dir,
    source: "/hl-deadman/test",
    now: () => (t += 1000),
    onError: (e) => errors.push(e),
    ...over,
  });
  return { trail, errors };
}
const lines = (dir: string, file = CURRENT_FILE) =>
  readFileSync(join(dir, file), "utf8")
    .split("\n")
    .filter((l) => l !== "");

describe("audit records (CloudEvents 1.0, hash-chained)", () => {
  test("a record carries the CloudEvents attributes, its sequence and the previous line's hash", () => {
    const first = chainRecord(
      GENESIS,
      { type: "switch.armed", account: A, data: { armedUntil: T0 } },
      {
        timeMs: T0,
        source: "/hl-deadman/h",
      },
    );
    expect(first.record).toMatchObject({
      specversion: "1.0",
      id: "1",
      source: "/hl-deadman/h",
      type: `${AUDIT_TYPE_PREFIX}switch.armed`,
      time: "2026-11-26T12:00:00.000Z",
      datacontenttype: "application/json",
      sequence: "1",
      prevhash: GENESIS_HASH,
      account: A,
      data: { armedUntil: T0 },
    });
    // extension attribute names are lowercase letters and digits only (CloudEvents 1.0, "Attribute Naming")
    for (const key of Object.keys(first.record)) expect(key).toMatch(/^[a-z0-9]+$/);
    const second = chainRecord(first.head, { type: "engine.down", data: {} }, { timeMs: T0, source: "s" });
    expect(second.record.prevhash).toBe(sha256Hex(first.line));
    expect(second.record.sequence).toBe("2");
  });

  test("verify accepts a chain and names the first changed, removed or inserted record", () => {
    let head = GENESIS;
    const ls: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = chainRecord(head, { type: "switch.fired", data: { i } }, { timeMs: T0 + i, source: "s" });
      ls.push(r.line);
      head = r.head;
    }
    const text = (xs: string[]) => `${xs.join("\n")}\n`;
    const good = verifyTrail([{ name: "a", text: text(ls) }], null);
    expect(good).toMatchObject({ ok: true, records: 5, head });

    const changed = [...ls];
    changed[2] = changed[2]!.replace('"i":2', '"i":7');
    expect(verifyTrail([{ name: "a", text: text(changed) }], null)).toMatchObject({
      ok: false,
      line: 4,
      sequence: 4,
    });
    const removed = ls.filter((_, i) => i !== 1);
    expect(verifyTrail([{ name: "a", text: text(removed) }], null)).toMatchObject({
      ok: false,
      line: 2,
      sequence: 3,
    });
    // the newest record changed: nothing after it to break, so the head's hash differs from the one kept elsewhere
    const last = [...ls];
    last[4] = last[4]!.replace('"i":4', '"i":9');
    const r = verifyTrail([{ name: "a", text: text(last) }], null);
    expect(r.ok && r.head.hash).not.toBe(head.hash);
    expect(verifyTrail([{ name: "a", text: text(["{}", ...ls]) }], null)).toMatchObject({
      ok: false,
      line: 1,
      reason: 'the line has no "specversion"',
    });
  });

  test("lines that are not records are named with the reason", () => {
    expect(parseRecordLine("not json")).toEqual({ ok: false, reason: "is not JSON" });
    expect(parseRecordLine("x".repeat(70_000))).toMatchObject({ ok: false });
    const good = chainRecord(GENESIS, { type: "t", data: {} }, { timeMs: T0, source: "s" }).line;
    expect(parseRecordLine(good.replace(GENESIS_HASH, "ABC"))).toMatchObject({
      ok: false,
      reason: expect.stringContaining("prevhash"),
    });
  });
});

describe("the audit trail's writer", () => {
  test("appends, fsyncs in batches, and a reopened trail continues the chain", async () => {
    const dir = tempDir();
    const { trail } = await openTrail(dir);
    for (let i = 0; i < 20; i++) trail.append({ type: "switch.fired", account: A, data: { i } });
    await trail.close();
    const again = await openTrail(dir);
    again.trail.append({ type: "engine.up", data: {} });
    await again.trail.close();
    const ls = lines(dir);
    expect(ls).toHaveLength(21);
    expect(JSON.parse(ls[20]!).sequence).toBe("21");
    expect(await verifyAuditDir(dir)).toMatchObject({ ok: true, records: 21, files: 1 });
    expect(again.trail.recent().map((r) => r.sequence)).toEqual(["21"]);
  });

  test("a line torn by a crash is recorded when the file is reopened, and verify tells it from a change", async () => {
    const dir = tempDir();
    const { trail } = await openTrail(dir);
    trail.append({ type: "switch.armed", account: A, data: { armedUntil: T0 } });
    await trail.close();
    // a crash in the middle of a write: half a record, no newline
    const half = chainRecord(GENESIS, { type: "x", data: {} }, { timeMs: T0, source: "s" }).line.slice(0, 40);
    appendFileSync(join(dir, CURRENT_FILE), half);
    expect(await verifyAuditDir(dir)).toMatchObject({ ok: true, tornTail: true, records: 1 });
    const again = await openTrail(dir);
    again.trail.append({ type: "engine.up", data: {} });
    await again.trail.close();
    const ls = lines(dir);
    expect(ls[1]).toBe(half);
    expect(JSON.parse(ls[2]!)).toMatchObject({ type: `${AUDIT_TYPE_PREFIX}audit.torn`, data: { bytes: 40 } });
    expect(await verifyAuditDir(dir)).toMatchObject({ ok: true, torn: 1, tornTail: false, records: 3 });
    // the same half line in the middle, without the writer's torn record after it: broken
    const text = readFileSync(join(dir, CURRENT_FILE), "utf8").split("\n");
    text.splice(2, 1);
    writeFileSync(join(dir, CURRENT_FILE), text.join("\n"));
    expect(await verifyAuditDir(dir)).toMatchObject({ ok: false, line: 2 });
  });

  test("rotates by size, carries the chain across files and anchors deleted files in the manifest", async () => {
    const dir = tempDir();
    const { trail } = await openTrail(dir, { maxFileBytes: 2_000, keepFiles: 2 });
    for (let i = 0; i < 60; i++) {
      trail.append({ type: "cancel.done", account: A, data: { pass: i, cancelled: 3 } });
      await trail.flush();
    }
    await trail.close();
    const names = readdirSync(dir).sort();
    expect(names.filter((n) => n.startsWith("audit-0"))).toHaveLength(2);
    expect(names).toContain(MANIFEST_FILE);
    const manifest = await readManifest(dir);
    expect(manifest!.deleted.length).toBeGreaterThan(0);
    const result = await verifyAuditDir(dir);
    expect(result).toMatchObject({ ok: true, head: { sequence: 60 } });
    expect(result.ok && result.firstSequence).toBe(manifest!.anchor.lastSequence + 1);
    // a kept rotated file deleted by hand: the chain no longer meets the anchor
    const oldest = names.find((n) => n.startsWith("audit-0"))!;
    rmSync(join(dir, oldest));
    expect(await verifyAuditDir(dir)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("does not follow"),
    });
  });

  test("a write the disk refuses stays queued and lands with the next one, chained in order", async () => {
    const dir = tempDir();
    let full = false;
    const errors: Error[] = [];
    const trail = await AuditTrail.open({
      dir,
      source: "s",
      now: () => T0,
      onError: (e) => errors.push(e),
      beforeWrite: async () => {
        if (full) throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
      },
    });
    trail.append({ type: "switch.armed", data: {} });
    await trail.flush();
    full = true;
    trail.append({ type: "engine.down", data: {} });
    await trail.flush();
    expect(errors.map((e) => e.message)).toEqual(["ENOSPC: no space left on device"]);
    expect(lines(dir)).toHaveLength(1);
    full = false;
    trail.append({ type: "engine.up", data: {} });
    await trail.close();
    const types = lines(dir).map((l) => JSON.parse(l).type.slice(AUDIT_TYPE_PREFIX.length));
    expect(types).toEqual(["switch.armed", "engine.down", "engine.up"]);
    expect(await verifyAuditDir(dir)).toMatchObject({ ok: true, records: 3 });
  });
});

describe("what the trail keeps", () => {
  test("protection changes and order actions, not every push", () => {
    const kept: { type: string; account?: string | undefined }[] = [];
    const on = auditSubscriber((e) => kept.push(e));
    const sw = (type: string, more: Record<string, unknown> = {}) =>
      on({ module: "switch", account: A, type, ...more } as never);
    sw("gauge", { name: "armedUntil", value: T0 + 60_000 });
    sw("pushConfirmed", { deadline: T0 + 60_000 });
    sw("gauge", { name: "armedUntil", value: T0 + 75_000 });
    sw("engineDown", { action: "cancel", detail: "closed", armedUntil: T0 + 75_000 });
    sw("ordersCancelled", { pass: 1, cancelled: 4, kept: 1, repeat: false });
    sw("pushFailed", { reason: "network", refused: false });
    sw("pushFailed", { reason: "limit", refused: true });
    sw("gauge", { name: "armedUntil", value: null });
    sw("triggerCounted", { deadline: T0, triggersToday: 1 });
    on({ module: "guard", type: "guardConfigured", kind: "socket" });
    expect(kept.map((k) => k.type)).toEqual([
      "switch.armed",
      "engine.down",
      "cancel.done",
      "switch.refused",
      "switch.disarmed",
      "switch.fired",
    ]);
  });
});

describe("a death's cancel passes: edges, not one record an interval", () => {
  test("the first pass is kept whatever it cancelled; a repeat pass only when it cancelled something", () => {
    const kept: { type: string; data: Record<string, unknown> }[] = [];
    const on = auditSubscriber((e) => kept.push({ type: e.type, data: e.data }));
    const sw = (type: string, more: Record<string, unknown> = {}) =>
      on({ module: "switch", account: A, type, ...more } as never);
    sw("engineDown", { action: "cancel", detail: "closed", armedUntil: T0 + 60_000 });
    sw("ordersCancelled", { pass: 1, cancelled: 0, kept: 1, repeat: false });
    // one pass each interval while the engine stays down: 100 that found nothing, one that cancelled an order
    for (let pass = 2; pass <= 101; pass++)
      sw("ordersCancelled", { pass, cancelled: 0, kept: 1, repeat: true });
    sw("ordersCancelled", { pass: 102, cancelled: 2, kept: 1, repeat: true });
    sw("ordersCancelled", { pass: 103, cancelled: 0, kept: 1, repeat: true });
    sw("engineUp", { detail: "back" });
    // the next death: its first pass is an edge again, even when it cancelled nothing
    sw("engineDown", { action: "cancel", detail: "closed", armedUntil: T0 + 90_000 });
    sw("ordersCancelled", { pass: 1, cancelled: 0, kept: 0, repeat: false });
    expect(kept.map((k) => [k.type, k.data.pass ?? null, k.data.cancelled ?? null])).toEqual([
      ["engine.down", null, null],
      ["cancel.done", 1, 0],
      ["cancel.done", 102, 2],
      ["engine.up", null, null],
      ["engine.down", null, null],
      ["cancel.done", 1, 0],
    ]);
  });
});

describe("a trail that cannot be opened", () => {
  test("the daemon's component runs on without one and says so (audit.unavailable)", async () => {
    const { auditComponent } = await import("../../src/app/parts/audit.js");
    const { createEventBus } = await import("../../src/core/events.js");
    const { captureLogger } = await import("../app/helpers.js");
    const dir = mkdtempSync(join(tmpdir(), "hl-audit-blocked-"));
    dirs.push(dir);
    writeFileSync(join(dir, "audit"), "a file where the trail's directory goes");
    const { logger, events } = captureLogger();
    const c = auditComponent();
    const out = await c.start({
      params: { stateDir: dir },
      runtime: { clock: { now: () => T0 } },
      bus: createEventBus(),
      logger,
      accounts: [A],
      config: { network: "testnet" },
    } as never);
    expect(out.audit.unavailable).toContain("EEXIST");
    expect(events("audit.unavailable")).toHaveLength(1);
    out.audit.append({ type: "engine.up", data: {} });
    await c.close();
  });
});
