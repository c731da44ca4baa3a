/**
 * The one error policy (src/protocol/policy.ts, composed from each protocol's rows by src/core/errors/policy.ts): every kind of every family has a row, the rows are coherent, the
 * switch and `shouldRetry` read them, and a command failing with each kind exits with the code the operator docs
 * promise for that situation (docs/cli.md and docs/evm.md, "Exit codes"; docs/cli-contract.md). The promises are
 * written here independently of the table, and each is checked against the docs' own text.
 */
import { readFileSync } from "node:fs";
import { Wallet } from "ethers";
import { describe, expect, test } from "vitest";
import { CliError, exitCodeFor } from "../../src/cli/errors.js";
import { ArgumentError } from "../../src/core/errors/argument.js";
import { BaseError, ValidationError } from "../../src/core/errors/base.js";
import { ExitCode } from "../../src/core/exit-codes.js";
import {
  EvmHttpError,
  EvmInconsistentBlockError,
  EvmMalformedResponseError,
  EvmNotFoundError,
  EvmRedirectError,
  EvmTransportError,
  JsonRpcError,
} from "../../src/protocol/evm/errors.js";
import { TransportError } from "../../src/protocol/http/errors.js";
import {
  HyperliquidApiError,
  type HyperliquidErrorKind,
  type NonceDetail,
} from "../../src/protocol/hyperliquid/errors.js";
import {
  classify,
  ERROR_POLICY,
  type ErrorDomain,
  exitCodeOfError,
  type HyperliquidPolicyKey,
  policyFor,
  shouldRetry,
} from "../../src/protocol/policy.js";
import { describeFailure } from "../../src/switch/driver.js";
import { cli } from "../helpers/cli.js";
import { startHostileServer } from "../hostile/bodies.js";

const doc = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");

/** What the operator docs promise, by situation: the code, and the words of the doc that promise it. */
const PROMISES = {
  refused: { code: 1, file: "docs/cli.md", says: /\| 1 \| runtime failure \(e\.g\. the exchange refused\)/ },
  unreachable: {
    code: 69,
    file: "docs/cli.md",
    says: /\| 69 \| service unavailable \(exchange or node unreachable/,
  },
  status5xx: { code: 69, file: "docs/cli.md", says: /\| 69 \|[^\n]*\b5xx\b/ },
  status429: { code: 69, file: "docs/cli.md", says: /\| 69 \|[^\n]*\b429\b/ },
  unreadable: { code: 69, file: "docs/cli.md", says: /\| 69 \|[^\n]*an unreadable answer/ },
  redirect: { code: 69, file: "docs/cli.md", says: /\| 69 \|[^\n]*a redirect: none is followed/ },
  usage: { code: 2, file: "docs/cli.md", says: /\| 2 \| usage error \(bad flag, argument/ },
  evmUnknownBlock: { code: 1, file: "docs/evm.md", says: /\| 1 \| unknown block/ },
  evmBadAnswer: { code: 1, file: "docs/evm.md", says: /\| 1 \|[^\n]*malformed\/inconsistent answer/ },
  evmUnreachable: { code: 69, file: "docs/evm.md", says: /\| 69 \| the RPC is unreachable/ },
  evmHttp: { code: 69, file: "docs/evm.md", says: /\| 69 \|[^\n]*answers HTTP errors/ },
  evmRedirect: { code: 69, file: "docs/evm.md", says: /\| 69 \|[^\n]*a redirect \(never followed\)/ },
  evmNoOts: { code: 69, file: "docs/evm.md", says: /\| 69 \|[^\n]*does not serve the `ots_` namespace/ },
} as const;
type Situation = keyof typeof PROMISES;

/** Every Hyperliquid kind (and nonce detail), and the situation it is in the operator's words. */
const HYPERLIQUID: Record<HyperliquidPolicyKey, Situation> = {
  too_early: "refused",
  daily_limit: "refused",
  volume_gate: "refused",
  nonce: "refused",
  "nonce/duplicate": "refused",
  "nonce/too_low": "refused",
  "nonce/too_high": "refused",
  expired: "refused",
  unknown_signer: "refused",
  vault_not_registered: "refused",
  address_budget: "refused",
  rate_limited: "status429",
  bad_request: "refused",
  server_error: "status5xx",
  transport: "unreachable",
  malformed_response: "unreadable",
  redirect: "redirect",
  rejected: "refused",
};

const EVM: Record<string, Situation> = {
  json_rpc: "refused",
  method_not_found: "evmNoOts",
  http: "evmHttp",
  transport: "evmUnreachable",
  malformed_response: "evmBadAnswer",
  redirect: "evmRedirect",
  not_found: "evmUnknownBlock",
  inconsistent_block: "evmBadAnswer",
};

const TRANSPORT: Record<string, Situation> = {
  transport: "unreachable",
  malformed_response: "unreadable",
  redirect: "redirect",
};
const ARGUMENT: Record<string, Situation> = { argument: "usage" };

const EXPECTED: Record<ErrorDomain, Record<string, Situation>> = {
  hyperliquid: HYPERLIQUID,
  evm: EVM,
  transport: TRANSPORT,
  argument: ARGUMENT,
};

const rows = Object.entries(EXPECTED).flatMap(([domain, kinds]) =>
  Object.entries(kinds).map(([key, situation]) => ({ domain: domain as ErrorDomain, key, situation })),
);

function hlError(key: string, extra: { aborted?: boolean } = {}): HyperliquidApiError {
  const [kind, detail] = key.split("/") as [HyperliquidErrorKind, NonceDetail | undefined];
  return new HyperliquidApiError({ kind, nonceDetail: detail, endpoint: "exchange", ...extra });
}

describe("the policy table", () => {
  test("behavior: every kind of every family has exactly one row, and nothing else does", () => {
    for (const domain of Object.keys(EXPECTED) as ErrorDomain[]) {
      expect(Object.keys(ERROR_POLICY[domain]).sort(), domain).toEqual(Object.keys(EXPECTED[domain]).sort());
    }
    expect(Object.keys(ERROR_POLICY).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  test.each(rows)(
    "behavior: $domain $key exits with the code the docs promise ($situation)",
    ({ domain, key, situation }) => {
      const promise = PROMISES[situation];
      expect(doc(promise.file), `${promise.file} still promises ${situation}`).toMatch(promise.says);
      expect((ERROR_POLICY[domain] as Record<string, { exitCode: number }>)[key]!.exitCode).toBe(
        promise.code,
      );
    },
  );

  test("behavior: docs/cli-contract.md lists every exit code the table uses", () => {
    const section = doc("docs/cli-contract.md").split("## Exit codes")[1]!.split("\n## ")[0]!;
    const codes = new Set(
      Object.values(ERROR_POLICY).flatMap((t) =>
        Object.values(t).map((r: { exitCode: number }) => r.exitCode),
      ),
    );
    for (const code of codes) expect(section, `exit ${code}`).toMatch(new RegExp(`\\b${code} `));
  });

  test.each(rows)("behavior: $domain $key is coherent (permanent is never retryable)", ({ domain, key }) => {
    const row = (ERROR_POLICY[domain] as Record<string, ReturnType<typeof policyFor>>)[key]!;
    if (row.permanent) expect(row.retryable).toBe(false);
    expect(row.note.length).toBeGreaterThan(0);
  });

  test("behavior: only a push with no (readable) answer or a 5xx has an unknown outcome", () => {
    const unknown = Object.entries(ERROR_POLICY.hyperliquid)
      .filter(([, r]) => r.outcomeUnknown)
      .map(([k]) => k)
      .sort();
    expect(unknown).toEqual(["malformed_response", "server_error", "transport"]);
  });
});

describe("shouldRetry (pure, reads the table)", () => {
  test.each(Object.keys(HYPERLIQUID))(
    "behavior: hyperliquid %s follows its row, through a cause chain too",
    (key) => {
      const error = hlError(key);
      const row = ERROR_POLICY.hyperliquid[key as HyperliquidPolicyKey];
      expect(shouldRetry(error)).toBe(row.retryable);
      expect(error.retryable).toBe(row.retryable);
      expect(error.permanent).toBe(row.permanent);
      expect(
        shouldRetry(new BaseError("push failed", { cause: new Error("wrapped", { cause: error }) })),
      ).toBe(row.retryable);
      expect(exitCodeOfError(new BaseError("outer", { cause: error }))).toBe(row.exitCode);
    },
  );

  test("behavior: the retryable kinds are exactly these (a change here is a policy change)", () => {
    const retryable = (domain: ErrorDomain) =>
      Object.entries(ERROR_POLICY[domain] as Record<string, { retryable: boolean }>)
        .filter(([, r]) => r.retryable)
        .map(([k]) => k)
        .sort();
    expect(retryable("hyperliquid")).toEqual([
      "expired",
      "malformed_response",
      "nonce",
      "nonce/duplicate",
      "rate_limited",
      "server_error",
      "transport",
    ]);
    expect(retryable("evm")).toEqual(["http", "inconsistent_block", "malformed_response", "transport"]);
    expect(retryable("transport")).toEqual(["malformed_response", "transport"]);
    expect(retryable("argument")).toEqual([]);
  });

  test("behavior: EVM, transport and argument errors are classified by their kind", () => {
    const url = "http://127.0.0.1/***";
    const cases: [Error, string, string][] = [
      [new JsonRpcError({ code: -32000, message: "boom", method: "m", url }), "evm", "json_rpc"],
      [new JsonRpcError({ code: -32601, message: "nope", method: "m", url }), "evm", "method_not_found"],
      [new EvmHttpError({ status: 503, body: "", method: "m", url }), "evm", "http"],
      [new EvmTransportError({ code: "ECONNREFUSED", reason: "x", method: "m", url }), "evm", "transport"],
      [
        new EvmRedirectError({
          status: 302,
          location: "http://127.0.0.2/***",
          sameOrigin: false,
          reason: "x",
          method: "m",
          url,
        }),
        "evm",
        "redirect",
      ],
      [new TransportError({ kind: "redirect", url, reason: "x", status: 301 }), "transport", "redirect"],
      [new EvmMalformedResponseError({ reason: "x", method: "m", url }), "evm", "malformed_response"],
      [new EvmNotFoundError({ block: "1", method: "m" }), "evm", "not_found"],
      [new EvmInconsistentBlockError({ block: 1, reason: "x" }), "evm", "inconsistent_block"],
      [new TransportError({ kind: "transport", url, reason: "x" }), "transport", "transport"],
      [
        new TransportError({ kind: "malformed_response", url, reason: "x" }),
        "transport",
        "malformed_response",
      ],
      [new ArgumentError("bad"), "argument", "argument"],
    ];
    for (const [error, domain, key] of cases) {
      const match = classify(error);
      expect(match?.domain, key).toBe(domain);
      expect(match?.key, key).toBe(key);
      expect(shouldRetry(error), key).toBe(policyFor(domain as ErrorDomain, key).retryable);
    }
  });

  test("behavior: an abort by the caller is never retried; foreign errors are not either", () => {
    expect(shouldRetry(hlError("transport", { aborted: true }))).toBe(false);
    expect(shouldRetry(new TransportError({ kind: "transport", url: "u", reason: "x", aborted: true }))).toBe(
      false,
    );
    expect(
      shouldRetry(
        new EvmTransportError({ code: "ERR_ABORTED", reason: "x", method: "m", url: "u", aborted: true }),
      ),
    ).toBe(false);
    expect(shouldRetry(new ValidationError("x", ["bad"]))).toBe(false);
    expect(shouldRetry(new Error("boom"))).toBe(false);
    expect(shouldRetry("string")).toBe(false);
    expect(shouldRetry(undefined)).toBe(false);
  });

  test("behavior: a cyclic cause chain ends the walk", () => {
    const a = new BaseError("a");
    const b = new BaseError("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(shouldRetry(a)).toBe(false);
  });
});

describe("the CLI's last word: an error no command wrapped exits with the table's code", () => {
  test("pure: a transport failure exits 69, a bad argument 2, an error of no family 1, a CliError its own", () => {
    const url = "http://127.0.0.1:1";
    expect(exitCodeFor(new TransportError({ kind: "transport", url, reason: "x" }))).toBe(
      policyFor("transport", "transport").exitCode,
    );
    expect(exitCodeFor(new TransportError({ kind: "transport", url, reason: "x" }))).toBe(
      ExitCode.unavailable,
    );
    expect(exitCodeFor(new ArgumentError("bad"))).toBe(ExitCode.usage);
    expect(exitCodeFor(new Error("x"))).toBe(ExitCode.runtime);
    expect(exitCodeFor(new ValidationError("answer", ["x"]))).toBe(ExitCode.runtime);
    expect(exitCodeFor(new CliError("x", ExitCode.tempFail))).toBe(ExitCode.tempFail);
  });
});

describe("the switch reads the table", () => {
  test.each(Object.keys(HYPERLIQUID))("behavior: a push failing with %s is described by its row", (key) => {
    const row = ERROR_POLICY.hyperliquid[key as HyperliquidPolicyKey];
    // An abort by the push's own time-out is still a transport failure the switch retries (its row).
    for (const aborted of key === "transport" ? [false, true] : [false]) {
      const f = describeFailure(hlError(key, { aborted }));
      expect({ retryable: f.retryable, permanent: f.permanent, outcomeUnknown: f.outcomeUnknown }).toEqual({
        retryable: row.retryable,
        permanent: row.permanent,
        outcomeUnknown: row.outcomeUnknown,
      });
    }
  });
});

// ------------------------------------------------------------------ the CLI, in process, against real HTTP

const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const ACCOUNT = new Wallet(KEY).address;

/** An /exchange answer producing each kind; `null` = drop the connection. */
const EXCHANGE_ANSWERS: Record<
  HyperliquidPolicyKey,
  { status?: number; headers?: Record<string, string>; body: string } | null
> = {
  too_early: err("Scheduled cancel time too early, must be at least 5 seconds from now."),
  daily_limit: err("Too many scheduled cancel triggers today"),
  volume_gate: err(
    "Cannot set scheduled cancel time until enough volume traded. Required: $1000000. Traded: $5.",
  ),
  nonce: err("Invalid nonce"),
  "nonce/duplicate": err("Invalid nonce: duplicate nonce 1"),
  "nonce/too_low": err("Invalid nonce: nonce too low 1 < 2"),
  "nonce/too_high": err("Invalid nonce: nonce too high 3 > 2"),
  expired: err("Action already expired"),
  unknown_signer: err(`User or API Wallet ${ACCOUNT.toLowerCase()} does not exist.`),
  vault_not_registered: err("Vault not registered: 0x0000000000000000000000000000000000000001"),
  address_budget: err("Too many cumulative requests sent (10001 > 10000)"),
  rate_limited: { status: 429, body: "null" },
  bad_request: { status: 422, body: "Failed to deserialize the JSON body into the target type" },
  server_error: { status: 500, body: "null" },
  transport: null,
  malformed_response: { body: "<html>not json</html>" },
  // to another origin (a port nothing listens on: following it would fail differently)
  redirect: { status: 307, headers: { location: "http://127.0.0.1:9/exchange" }, body: "" },
  rejected: err("Something new"),
};
function err(text: string) {
  return { body: JSON.stringify({ status: "err", response: text }) };
}

describe("schedule exits with the table's code for every Hyperliquid kind (docs/cli.md)", () => {
  test.each(Object.keys(EXCHANGE_ANSWERS))("behavior: %s", async (key) => {
    const answer = EXCHANGE_ANSWERS[key as HyperliquidPolicyKey];
    const server = await startHostileServer(() => {
      if (answer === null) throw new Error("drop");
      return answer;
    });
    try {
      const r = await cli(
        ["schedule", "--in", "60s", "--account", ACCOUNT, "--api-url", server.url, "--json"],
        { env: { HL_PRIVATE_KEY: KEY } },
      );
      expect(r.code, r.stdout + r.stderr).toBe(PROMISES[HYPERLIQUID[key as HyperliquidPolicyKey]].code);
      expect(server.seen.some((s) => s.path === "/exchange")).toBe(true);
    } finally {
      await server.close();
    }
  });
});

/** An RPC answer producing each EVM kind through `evm header 1`; `null` = drop the connection. */
const RPC_ANSWERS: Record<
  string,
  ((id: unknown) => { status?: number; headers?: Record<string, string>; body: string }) | null
> = {
  json_rpc: (id) => ({
    body: JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32000, message: "boom" } }),
  }),
  method_not_found: (id) => ({
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      error: { code: -32601, message: "the method does not exist" },
    }),
  }),
  http: () => ({ status: 503, body: "busy" }),
  transport: null,
  malformed_response: () => ({ body: "not json" }),
  redirect: () => ({ status: 308, headers: { location: "http://127.0.0.1:9/evm" }, body: "" }),
  not_found: (id) => ({ body: JSON.stringify({ jsonrpc: "2.0", id, result: null }) }),
};

describe("evm exits with the table's code for every EVM kind it can meet (docs/evm.md)", () => {
  test.each(Object.keys(RPC_ANSWERS))("behavior: %s", async (kind) => {
    const answer = RPC_ANSWERS[kind];
    const server = await startHostileServer((_path, body) => {
      if (answer === null || answer === undefined) throw new Error("drop");
      return answer((body as { id?: unknown }).id);
    });
    try {
      const r = await cli(["evm", "header", "1", "--rpc-url", `${server.url}/evm`]);
      expect(r.code, r.stderr).toBe(PROMISES[EVM[kind]!].code);
      expect(server.seen.length).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});
