import { describe, expect, test } from "vitest";
import { planAccounts } from "../../src/app/daemon.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { metricsPerAccount } from "../../src/surface/metrics.js";

const signer = "0x1111111111111111111111111111111111111111";
const master = "0x2222222222222222222222222222222222222222";
const sub = "0x3333333333333333333333333333333333333333";
const vault = "0x4444444444444444444444444444444444444444";
const config = (extra: Record<string, unknown>) => ConfigSchema.parse(extra);

describe("planAccounts", () => {
  test("default: the signer's own account, pushed directly", () => {
    expect(planAccounts(config({}), signer)).toEqual([{ account: signer, vaultAddress: undefined, signer }]);
  });

  test("behavior: an agent key with --account MASTER pushes without vaultAddress", () => {
    expect(planAccounts(config({ accounts: [master] }), signer)).toEqual([
      { account: master, vaultAddress: undefined, signer },
    ]);
  });

  test("behavior: agent key for a master and its subaccount: the first acts directly, the rest as vaultAddress", () => {
    expect(planAccounts(config({ accounts: [master, sub] }), signer)).toEqual([
      { account: master, vaultAddress: undefined, signer },
      { account: sub, vaultAddress: sub, signer },
    ]);
  });

  test("behavior: when the signer is listed it acts directly wherever it stands", () => {
    expect(planAccounts(config({ accounts: [sub, signer] }), signer)).toEqual([
      { account: sub, vaultAddress: sub, signer },
      { account: signer, vaultAddress: undefined, signer },
    ]);
  });

  test("behavior: --vault sends every push with vaultAddress", () => {
    expect(planAccounts(config({ vault }), signer)).toEqual([
      { account: vault, vaultAddress: vault, signer },
    ]);
  });

  test("behavior: duplicates are pushed once", () => {
    expect(
      planAccounts(config({ accounts: [master, master.toUpperCase().replace("0X", "0x")] }), signer),
    ).toHaveLength(1);
  });
});

describe("metricsPerAccount", () => {
  test("default: auto exports every series up to 100 accounts, only what alerts need above; a choice is kept", () => {
    expect(metricsPerAccount("auto", 1)).toBe("all");
    expect(metricsPerAccount("auto", 100)).toBe("all");
    expect(metricsPerAccount("auto", 101)).toBe("alerts");
    expect(metricsPerAccount("all", 1_000)).toBe("all");
    expect(metricsPerAccount("alerts", 1)).toBe("alerts");
  });
});
