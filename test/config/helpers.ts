import { expect } from "vitest";
import { ConfigError } from "../../src/config/errors.js";

/** The issues of the ConfigError `fn` throws (exit code 78); fails the test when it throws nothing else. */
export function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(78);
    return (error as ConfigError).issues;
  }
  throw new Error("expected a ConfigError");
}
