// The build's text rewrites of dependency files (scripts/bundle.mjs, scripts/node-cron-utc.mjs) go through this one
// check: each expected text must be there exactly as often as expected, or the build fails, so that a new version of
// a dependency is looked at again instead of being rewritten wrongly.

/** Replaces each `from` with `to` in `source`; each must occur exactly `count` times, or the build fails. */
export function replaceExactly(name, source, file, pairs) {
  let out = source;
  for (const [from, to, count] of pairs) {
    const found = out.split(from).length - 1;
    if (found !== count)
      throw new Error(`${name}: expected ${count} of "${from}" in ${file}, found ${found}`);
    out = out.split(from).join(to);
  }
  return out;
}
