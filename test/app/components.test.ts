/**
 * The ordered list of components (src/app/components.ts, docs/daemon.md "Start order and exit"): each starts on
 * what the ones before it provided, they close in reverse, once, after the one abort; a failing start closes the
 * started ones in reverse and names itself. Pure, in-process.
 */
import { describe, expect, test } from "vitest";
import { type Built, type Component, ComponentStartFailure, Components } from "../../src/app/components.js";

/** A component that records its start and close in `journal` and provides `{ [name]: value }`. */
function part<In, K extends string>(
  journal: string[],
  name: K,
  start: (ctx: In) => unknown = () => undefined,
  close: () => unknown = () => undefined,
): Component<In, Record<K, string>> {
  return {
    name,
    async start(ctx) {
      await start(ctx);
      journal.push(`start ${name}`);
      return { [name]: `${name}!` } as Record<K, string>;
    },
    async close() {
      journal.push(`close ${name}`);
      await close();
    },
  };
}

describe("Components", () => {
  test("default: starts in order on what the ones before provided; closes in reverse, after the abort, once", async () => {
    const journal: string[] = [];
    const seen: unknown[] = [];
    const components = new Components({ abort: (reason) => journal.push(`abort ${reason}`) });
    const ctx = await components.start(
      [
        part(journal, "a"),
        part(journal, "b", (c: { a: string }) => seen.push(c.a)),
        part(journal, "c", (c: { a: string; b: string; base: number }) => seen.push(c.b, c.base)),
      ] as const,
      { base: 1 },
    );
    expect(ctx).toEqual({ base: 1, a: "a!", b: "b!", c: "c!" });
    expect(seen).toEqual(["a!", "b!", 1]);
    expect(components.started).toEqual(["a", "b", "c"]);
    const first = components.close("stop");
    expect(components.close("again")).toBe(first);
    await first;
    expect(journal).toEqual(["start a", "start b", "start c", "abort stop", "close c", "close b", "close a"]);
    expect(components.started).toEqual([]);
  });

  test("behavior: a failing start aborts, closes the started ones in reverse (not itself, not the later ones) and names itself", async () => {
    const journal: string[] = [];
    const components = new Components({ abort: (reason) => journal.push(`abort ${reason}`) });
    const cause = new Error("port taken");
    const error = await components
      .start(
        [
          part(journal, "a"),
          part(journal, "b", undefined, () => {
            throw new Error("close of b failed");
          }),
          part(journal, "c", () => {
            throw cause;
          }),
          part(journal, "d"),
        ] as const,
        {},
      )
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ComponentStartFailure);
    expect((error as ComponentStartFailure).component).toBe("c");
    expect((error as ComponentStartFailure).cause).toBe(cause);
    // b's close failing does not keep a from closing
    expect(journal).toEqual(["start a", "start b", "abort start failed", "close b", "close a"]);
    // a close after the failed start closes nothing again
    await components.close();
    expect(journal.filter((l) => l.startsWith("close"))).toEqual(["close b", "close a"]);
  });

  test("behavior: a close that throws is reported and the others still close", async () => {
    const journal: string[] = [];
    const failed: string[] = [];
    const components = new Components({
      abort: () => {},
      onCloseError: (name, error) => failed.push(`${name}: ${(error as Error).message}`),
    });
    await components.start(
      [
        part(journal, "a"),
        part(journal, "b", undefined, () => Promise.reject(new Error("disk gone"))),
        part(journal, "c"),
      ] as const,
      {},
    );
    await components.close();
    expect(journal.slice(3)).toEqual(["close c", "close b", "close a"]);
    expect(failed).toEqual(["b: disk gone"]);
  });
});

describe("Built: the list is type-checked", () => {
  test("behavior: a component listed before what it needs makes the context unusable (a type error)", () => {
    type Ledger = Component<{ base: number }, { ledger: string }>;
    type Switches = Component<{ ledger: string }, { switches: string[] }>;
    // in dependency order: the context has everything
    const ok: Built<readonly [Ledger, Switches], { base: number }> = { base: 1, ledger: "l", switches: [] };
    expect(ok.switches).toEqual([]);
    // out of order: the switches come before the ledger they need
    const early = { listedTooEarly: "switches" } as Built<readonly [Switches, Ledger], { base: number }>;
    // @ts-expect-error -- `switches` does not exist on ListedTooEarly: `npx tsc` fails if the check goes away
    expect(early.switches).toBeUndefined();
    expect(early.listedTooEarly).toBe("switches");
  });
});
