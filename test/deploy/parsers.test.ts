/**
 * The readers the deployment tests rely on (parsers.ts). If one of them misreads a file, the deploy tests check
 * the wrong thing and pass; these pin each reader on small inputs with known answers.
 */
import { describe, expect, test } from "vitest";
import {
  dockerEnv,
  execForm,
  instructions,
  parseDockerfile,
  parseTimespan,
  parseUnit,
  parseYamlDocuments,
  unitValue,
} from "./parsers.js";

describe("parseUnit (systemd unit files)", () => {
  const unit = parseUnit(
    [
      "# a comment",
      "; another comment",
      "[Unit]",
      "Description=hl-deadman",
      "After=network-online.target",
      "",
      "[Service]",
      "ExecStart=/usr/bin/node \\",
      "  /opt/hl-deadman/dist/bin/hl-deadman.js run \\",
      "  --config /etc/hl-deadman/config.json",
      "Environment=A=1",
      "Environment=B=2",
      "Environment=",
      "Environment=C=3",
      "RestartPreventExitStatus=78",
      "RestartPreventExitStatus=2",
      "[Unit]",
      "Wants=network-online.target",
    ].join("\n"),
  );

  test("default: sections, keys and values; comments and blank lines skipped", () => {
    expect([...unit.keys()]).toEqual(["Unit", "Service"]);
    expect(unitValue(unit, "Unit", "Description")).toBe("hl-deadman");
    expect(unitValue(unit, "Unit", "Nope")).toBeUndefined();
    expect(unitValue(unit, "Nope", "Description")).toBeUndefined();
  });

  test("behavior: backslash continuation joins the lines with one space", () => {
    expect(unitValue(unit, "Service", "ExecStart")).toBe(
      "/usr/bin/node  /opt/hl-deadman/dist/bin/hl-deadman.js run  --config /etc/hl-deadman/config.json",
    );
    expect(unitValue(unit, "Service", "ExecStart")?.split(/\s+/)).toEqual([
      "/usr/bin/node",
      "/opt/hl-deadman/dist/bin/hl-deadman.js",
      "run",
      "--config",
      "/etc/hl-deadman/config.json",
    ]);
  });

  test("behavior: repeated keys keep every value in order, the empty reset included; a reopened section merges", () => {
    expect(unit.get("Service")?.get("Environment")).toEqual(["A=1", "B=2", "", "C=3"]);
    expect(unit.get("Service")?.get("RestartPreventExitStatus")).toEqual(["78", "2"]);
    expect(unitValue(unit, "Service", "Environment")).toBe("C=3");
    expect(unitValue(unit, "Unit", "Wants")).toBe("network-online.target");
    expect(unitValue(unit, "Unit", "Description")).toBe("hl-deadman");
  });

  test("error: a line outside a section or without '=' throws, naming it", () => {
    expect(() => parseUnit("Description=x")).toThrow("not a unit-file line: Description=x");
    expect(() => parseUnit("[Unit]\njust words")).toThrow("not a unit-file line: just words");
  });
});

describe("parseTimespan (systemd time spans)", () => {
  test("default: a plain number is seconds", () => {
    expect(parseTimespan("20")).toBe(20_000);
    expect(parseTimespan(" 1.5 ")).toBe(1_500);
  });

  test("behavior: units, alone, spaced and run together", () => {
    expect(parseTimespan("500ms")).toBe(500);
    expect(parseTimespan("20s")).toBe(20_000);
    expect(parseTimespan("2min")).toBe(120_000);
    expect(parseTimespan("1min 30s")).toBe(90_000);
    expect(parseTimespan("1min30s")).toBe(90_000);
    expect(parseTimespan("1h 2m 3s 4ms")).toBe(3_723_004);
    expect(parseTimespan("250us")).toBe(0.25);
  });

  test("error: unknown units and junk throw", () => {
    expect(() => parseTimespan("5 parsecs")).toThrow('unknown time unit "parsecs"');
    expect(() => parseTimespan("soon")).toThrow("not a time span: soon");
    expect(() => parseTimespan("")).toThrow("not a time span");
    expect(() => parseTimespan("10s!")).toThrow("not a time span");
  });
});

describe("parseDockerfile (dockerfile-ast)", () => {
  const file = parseDockerfile(
    [
      "# syntax=docker/dockerfile:1",
      "ARG BASE=node:20-slim",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Dockerfile variable syntax, not a template
      "FROM ${BASE} AS build",
      "RUN npm ci \\",
      "  # a comment inside a continuation",
      "  && npm run build",
      "FROM $BASE",
      'ENV A=1 B="two words" \\',
      "    C=3",
      "ENV LEGACY some value",
      "COPY --from=build --chown=node:node /app/dist ./dist",
      'HEALTHCHECK --interval=15s CMD ["node", "-e", "1"]',
      'ENTRYPOINT ["node", "dist/bin/hl-deadman.js"]',
      "CMD run --sim",
    ].join("\n"),
  );
  const [build, runtime] = file.stages;

  test("default: global ARGs, stages with their resolved image and name", () => {
    expect(file.args).toEqual(new Map([["BASE", "node:20-slim"]]));
    expect(file.stages.map((s) => [s.from, s.name])).toEqual([
      ["node:20-slim", "build"],
      ["node:20-slim", undefined],
    ]);
  });

  test("behavior: continuation lines joined, a comment inside them dropped, 1-based lines", () => {
    const [run] = instructions(build!, "RUN");
    expect(run?.args).toBe("npm ci && npm run build");
    expect(run?.args).not.toContain("comment");
    expect(run?.line).toBe(4);
  });

  test("behavior: ENV in both forms, quotes removed; flags apart from the arguments", () => {
    expect(dockerEnv(runtime!)).toEqual(
      new Map([
        ["A", "1"],
        ["B", "two words"],
        ["C", "3"],
        ["LEGACY", "some value"],
      ]),
    );
    const [copy] = instructions(runtime!, "COPY");
    expect(copy?.args).toBe("/app/dist ./dist");
    expect(copy?.flags).toEqual(
      new Map([
        ["from", "build"],
        ["chown", "node:node"],
      ]),
    );
    const [health] = instructions(runtime!, "HEALTHCHECK");
    expect(health?.flags.get("interval")).toBe("15s");
    expect(health?.args).toBe('CMD ["node", "-e", "1"]');
  });

  test("behavior: exec form parsed, shell form undefined", () => {
    expect(execForm(instructions(runtime!, "ENTRYPOINT")[0]!.args)).toEqual([
      "node",
      "dist/bin/hl-deadman.js",
    ]);
    expect(execForm(instructions(runtime!, "CMD")[0]!.args)).toBeUndefined();
    expect(() => execForm('["node", 1]')).toThrow("not an exec-form array");
  });

  test("error: an instruction before FROM (other than ARG) or a malformed FROM throws", () => {
    expect(() => parseDockerfile("RUN true\nFROM x")).toThrow("instruction before FROM (line 1): RUN");
    expect(() => parseDockerfile("FROM x AS")).toThrow("bad FROM (line 1)");
  });
});

describe("parseYamlDocuments (yaml)", () => {
  test("default: every --- document, block scalars, flow sequences, typed scalars", () => {
    const docs = parseYamlDocuments(
      [
        "kind: ConfigMap",
        "data:",
        "  config.json: |",
        '    {"a": 1}',
        "---",
        "# comment",
        "kind: Deployment",
        "spec:",
        "  replicas: 1",
        "  args: [run, --config, /etc/x.json]",
        "  containers:",
        "    - name: engine",
        "      readOnly: true",
        "      memory: 64Mi",
        "      empty: ~",
      ].join("\n"),
    );
    expect(docs).toEqual([
      { kind: "ConfigMap", data: { "config.json": '{"a": 1}\n' } },
      {
        kind: "Deployment",
        spec: {
          replicas: 1,
          args: ["run", "--config", "/etc/x.json"],
          containers: [{ name: "engine", readOnly: true, memory: "64Mi", empty: null }],
        },
      },
    ]);
  });

  test("error: a duplicate key or broken syntax throws, naming the document", () => {
    expect(() => parseYamlDocuments("a: 1\n---\nb: 1\nb: 2\n")).toThrow(/YAML document 2: .*unique/i);
    expect(() => parseYamlDocuments("a: [1, 2\n")).toThrow(/YAML document 1/);
  });
});
