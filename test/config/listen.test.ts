import { describe, expect, test } from "vitest";
import { LISTEN_ADDRESS_PATTERN, ListenAddressError, parseListenAddress } from "../../src/config/listen.js";
import { ConfigError, configJsonSchema, loadConfig } from "../../src/config/load.js";

const VALID = [
  "127.0.0.1:9464",
  "[::1]:0",
  ":9100",
  "localhost:8080",
  "off",
  "OFF",
  " 127.0.0.1:1 ",
  "0.0.0.0:70000",
];
const MALFORMED = ["127.0.0.1", "::1:9464", "127.0.0.1:", "host:port", "[::1]9464", "127.0.0.1:123456", ""];

function issuesOf(health: string): string[] {
  try {
    loadConfig({ options: { health }, env: {} });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues;
  }
  return [];
}

describe("the listen address (health): one parser for the config, the JSON schema and the health server", () => {
  test("default: the JSON schema's pattern is the parser's, and accepts exactly the well-formed addresses", () => {
    const schema = configJsonSchema() as { properties: { health: { pattern: string } } };
    expect(schema.properties.health.pattern).toBe(LISTEN_ADDRESS_PATTERN);
    const re = new RegExp(LISTEN_ADDRESS_PATTERN);
    for (const v of VALID) expect(re.test(v), v).toBe(true);
    for (const v of MALFORMED) {
      expect(re.test(v), v).toBe(false);
      expect(() => parseListenAddress(v), v).toThrow(ListenAddressError);
    }
  });

  test("error: the config refuses what the health server would refuse, with the parser's rule", () => {
    expect(issuesOf("127.0.0.1:70000")).toEqual([
      'health = "127.0.0.1:70000" (flag --health): port 70000 is above 65535',
    ]);
    expect(issuesOf("::1:9464")).toEqual([
      'health = "::1:9464" (flag --health): expected HOST:PORT, [IPv6]:PORT or off',
    ]);
    for (const v of VALID.filter((v) => v !== "0.0.0.0:70000")) {
      expect(issuesOf(v), v).toEqual([]);
      expect(() => parseListenAddress(v), v).not.toThrow();
    }
  });
});
