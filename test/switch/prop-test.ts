/**
 * `test.prop` of @fast-check/vitest, for the property tests of test/switch, without that package: loading it built
 * its chained `test` for every combination of vitest's modifiers, about 2 s of CPU in each worker that loaded it
 * (more than a planted-bug check). The same run for these tests, which have no beforeEach/afterEach hooks: the seed
 * given, else fast-check's global one, else a random one, named in the test's title `(with seed=N)`; fc.assert over
 * the async property, with fast-check's global interruptAfterTimeLimit.
 */
import fc from "fast-check";
import { test } from "vitest";

export function propTest<Ts extends [unknown, ...unknown[]]>(
  arbitraries: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> },
  params: fc.Parameters<Ts> = {},
) {
  return (label: string, prop: (...args: Ts) => unknown, timeout?: number): void => {
    const run: fc.Parameters<Ts> = { ...params };
    const global = fc.readConfigureGlobal();
    if (run.seed === undefined) run.seed = global.seed ?? Date.now() ^ (Math.random() * 4_294_967_296);
    if (run.interruptAfterTimeLimit === undefined)
      run.interruptAfterTimeLimit = global.interruptAfterTimeLimit;
    const property = (fc.asyncProperty as unknown as (...a: unknown[]) => fc.IAsyncProperty<Ts>)(
      ...arbitraries,
      (...args: Ts) => Promise.resolve(prop(...args)),
    );
    test(`${label} (with seed=${run.seed})`, async () => fc.assert(property, run), timeout);
  };
}

/**
 * A feature machine's property (test/escalation, test/drill): 1,000 sequences of `arbitrary` from `defaultSeed`
 * (HL_PROPERTY_SEEDS=<seed> replays one, =random draws new ones), each run through `run`, whose world records the
 * rules it saw broken (`violations`) and its last steps (`log`); the title names the rules checked.
 */
export function machineProperty<S>(
  rules: string,
  defaultSeed: number,
  arbitrary: fc.Arbitrary<S>,
  run: (s: S) => { violations: readonly string[]; log: readonly string[] },
): void {
  const given = process.env.HL_PROPERTY_SEEDS ?? "";
  const seed = /^-?\d+$/.test(given) ? Number(given) : given === "random" ? undefined : defaultSeed;
  propTest([arbitrary] as [fc.Arbitrary<S>], { numRuns: 1_000, ...(seed === undefined ? {} : { seed }) })(
    /^-?\d+$/.test(given) ? `${rules}, seed ${given}` : `${rules} after every step of random sequences`,
    (s) => {
      const w = run(s);
      if (w.violations.length > 0)
        throw new Error(`${w.violations.join("\n")}\n--- steps:\n${w.log.slice(-15).join("\n")}`);
    },
    60_000,
  );
}
