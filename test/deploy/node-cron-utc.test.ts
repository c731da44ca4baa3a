/**
 * scripts/node-cron-utc.mjs, the bundle's rewrite of node-cron 4's dist/_shared.js: in UTC the date parts come from
 * Date's UTC getters instead of an Intl.DateTimeFormat (whose first use maps ICU's data, +8.6 MiB resident). The
 * rewritten module must compute exactly what node-cron's own does: the parts, the ISO text and the next match of
 * cron expressions, over many dates, and still use Intl for any other zone.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
// @ts-expect-error: a build script in plain JavaScript, without types
import { nodeCronUtcWithoutIntl } from "../../scripts/node-cron-utc.mjs";

const root = resolve(import.meta.dirname, "../..");
const sharedPath = join(root, "node_modules/node-cron/dist/_shared.js");
const tmp = mkdtempSync(join(tmpdir(), "hl-deadman-cron-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Parts = Record<string, unknown>;
type Shared = {
  L: new (date: Date, tz?: string) => { getParts(): Parts; toISO(): string };
  T: new (pattern: string, tz?: string) => { getNextMatch(date: Date): Date; match(date: Date): boolean };
};

async function modules(): Promise<{ original: Shared; rewritten: Shared }> {
  const rewrittenPath = join(tmp, "_shared.js");
  const text = nodeCronUtcWithoutIntl(readFileSync(sharedPath, "utf8")) as string;
  writeFileSync(rewrittenPath, text.replace(/^\/\/# sourceMappingURL=.*$/m, ""));
  return {
    original: (await import(pathToFileURL(sharedPath).href)) as Shared,
    rewritten: (await import(pathToFileURL(rewrittenPath).href)) as Shared,
  };
}

/** The parts as plain values (node-cron's own `gmt` is a lazy getter). */
const plain = (p: Parts) => ({ ...p, gmt: p.gmt });

/** Dates from a fixed seed: 1990..2100, any millisecond, plus the edges (midnights, month ends, leap days). */
function dates(n: number): Date[] {
  let x = 0x2545f491;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  const out: Date[] = [];
  const lo = Date.UTC(1990, 0, 1);
  const hi = Date.UTC(2100, 0, 1);
  for (let i = 0; i < n; i++) out.push(new Date(Math.floor(lo + next() * (hi - lo))));
  for (const t of [
    Date.UTC(2024, 1, 29, 0, 0, 0, 0),
    Date.UTC(2024, 1, 28, 23, 59, 59, 999),
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
    Date.UTC(2027, 0, 1, 0, 0, 0, 0),
    Date.UTC(2026, 0, 1, 12, 0, 0, 0),
    Date.UTC(2100, 1, 28, 23, 59, 59, 500),
  ])
    out.push(new Date(t));
  return out;
}

describe("node-cron's dates in UTC without Intl (the bundle's rewrite)", () => {
  test("default: the parts and the ISO text are node-cron's own, for 3,000 dates", async () => {
    const { original, rewritten } = await modules();
    for (const d of dates(3_000)) {
      const a = new original.L(d, "UTC");
      const b = new rewritten.L(d, "UTC");
      expect(plain(b.getParts()), d.toISOString()).toEqual(plain(a.getParts()));
      expect(b.toISO()).toBe(a.toISO());
    }
  });

  test("default: the next match of cron expressions is node-cron's own", async () => {
    const { original, rewritten } = await modules();
    const expressions = [
      "0 0 * * *",
      "*/15 * * * *",
      "0 12 * * 1-5",
      "0 0 29 2 *",
      "59 59 23 31 12 *",
      "30 2 1,15 * *",
      "0 0 * * 0",
    ];
    for (const expr of expressions) {
      const a = new original.T(expr, "UTC");
      const b = new rewritten.T(expr, "UTC");
      for (const d of dates(150)) {
        expect(b.getNextMatch(d).getTime(), `${expr} after ${d.toISOString()}`).toBe(
          a.getNextMatch(d).getTime(),
        );
        expect(b.match(d)).toBe(a.match(d));
      }
    }
  });

  test("behavior: in UTC no Intl formatter is built; any other zone still goes through Intl, unchanged", async () => {
    const { original, rewritten } = await modules();
    const Real = Intl.DateTimeFormat;
    let built = 0;
    const counting = function (this: unknown, ...args: ConstructorParameters<typeof Real>) {
      built++;
      return new Real(...args);
    } as unknown as typeof Intl.DateTimeFormat;
    // distinct minutes, so that node-cron's formatter caches (per zone) are not what keeps the count at 0
    const ds = dates(50);
    Intl.DateTimeFormat = counting;
    try {
      for (const d of ds) new rewritten.T("0 0 * * *", "UTC").getNextMatch(d);
      expect(built).toBe(0);
      for (const d of ds.slice(0, 20)) {
        const b = new rewritten.L(d, "America/New_York");
        const a = new original.L(d, "America/New_York");
        expect(plain(b.getParts())).toEqual(plain(a.getParts()));
      }
      expect(built).toBeGreaterThan(0);
    } finally {
      Intl.DateTimeFormat = Real;
    }
  });

  test("error: a node-cron whose text is not the expected one fails the build", () => {
    expect(() => nodeCronUtcWithoutIntl("export const x = 1;", "x.js")).toThrow(
      /node-cron-utc: expected 1 of/,
    );
  });
});
