/**
 * `run --help` in groups (issue 42): each configuration flag under its topic's heading (the `topic` of its row in
 * src/config/options.ts, headings from src/cli/options.ts), the groups in the table's order of topics, the general
 * keys beside --config, --sim and --help in `Options:`. `config check` and `doctor` take the same flags and show the
 * same groups.
 */
import { describe, expect, test } from "vitest";
import { HELP_HEADINGS } from "../../src/cli/options.js";
import { OPTION_TOPICS, OPTIONS } from "../../src/config/options.js";
import { cli } from "../helpers/cli.js";

/** The help's option groups: heading -> long flags, in the order shown (the text after the options left out). */
function groups(help: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let heading: string | undefined;
  for (const line of help.split("\n")) {
    if (/^\S.*:$/.test(line)) heading = line;
    else if (line === "") heading = undefined;
    const flag = /^ {2}(?:-\w, )?(--[a-z-]+)(?: <[^>]+>)?(?: {2,}|$)/.exec(line)?.[1];
    if (heading && flag && !heading.startsWith("The signer's key")) {
      out.set(heading, [...(out.get(heading) ?? []), flag]);
    }
  }
  return out;
}

const headingOf = (topic: (typeof OPTION_TOPICS)[number]): string =>
  topic === "general" ? "Options:" : HELP_HEADINGS[topic];

describe("run --help in groups", () => {
  test("default: every flag under its topic's heading, the groups in the table's order of topics", async () => {
    const r = await cli(["run", "--help"]);
    expect(r.code).toBe(0);
    const shown = groups(r.stdout);
    expect([...shown.keys()]).toEqual(OPTION_TOPICS.map(headingOf));
    for (const topic of OPTION_TOPICS) {
      const flags = OPTIONS.filter((o) => o.topic === topic).map((o) => `--${o.flag}`);
      const own =
        topic === "general"
          ? ["--config", ...flags, "--sim", "--help"]
          : topic === "observability"
            ? [...flags, "--json"]
            : flags;
      expect(shown.get(headingOf(topic)), topic).toEqual(own);
    }
  });

  test("behavior: config check shows the same groups; --json stays general there (one JSON document)", async () => {
    const r = await cli(["config", "check", "--help"]);
    expect(r.code).toBe(0);
    const shown = groups(r.stdout);
    expect([...shown.keys()]).toEqual(OPTION_TOPICS.map(headingOf));
    expect(shown.get("Options:")).toContain("--json");
    expect(shown.get(HELP_HEADINGS.observability)).not.toContain("--json");
  });
});
