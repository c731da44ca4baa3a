/** The finder of external programs: found on PATH, or a failure that carries the apt-get command. */
import { describe, expect, test } from "vitest";
import { MissingBinaryError, requireBinary } from "../helpers/binaries.js";

describe("requireBinary", () => {
  test("finds a program on PATH", () => {
    expect(requireBinary("sh", "/nonexistent:/bin:/usr/bin")).toMatch(/\/sh$/);
  });

  test("a missing program fails with the Debian package to install", () => {
    expect(() => requireBinary("promtool", "/nonexistent")).toThrow(MissingBinaryError);
    expect(() => requireBinary("promtool", "/nonexistent")).toThrow("apt-get install -y prometheus");
    expect(() => requireBinary("amtool", "")).toThrow("apt-get install -y prometheus-alertmanager");
    expect(() => requireBinary("/nonexistent/chromium")).toThrow("apt-get install -y chromium");
  });
});
