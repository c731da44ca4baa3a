/**
 * Faults per endpoint, switchable at run time (programmatically or through POST /admin/faults). Random
 * faults draw from a seeded PRNG, so a run with the same seed and the same requests fails the same way.
 */
import { z } from "zod";
import { ArgumentError } from "../core/errors/argument.js";
import { parse } from "../core/errors/parse.js";
import { createRng, deriveSeed, type Rng } from "./prng.js";
import type { SimEndpoint } from "./records.js";

const Rate = z.number().min(0).max(1);

export const FaultSpec = z.strictObject({
  /** Added delay before the answer (ms). */
  latencyMs: z.number().int().min(0).max(600_000).optional(),
  /** Share of requests answered with `errorStatus` and body `null` (docs/exchange-behaviour.md §5, "Transient 500 null"). */
  errorRate: Rate.optional(),
  errorStatus: z.union([z.literal(500), z.literal(502), z.literal(503)]).optional(),
  /** Answer every request with 429, as the IP limiter does. */
  rateLimit: z.boolean().optional(),
  /** Share of requests whose connection is destroyed without an answer (ECONNRESET at the client). */
  resetRate: Rate.optional(),
  /** Accept the request and never answer (the client must time out). */
  blackhole: z.boolean().optional(),
  /** Answer 200 with a truncated JSON body. */
  malformed: z.boolean().optional(),
  /** Answer 200 with valid JSON of the wrong shape. */
  wrongShape: z.boolean().optional(),
  /** Answer 200 with a valid JSON body of several MB. */
  hugeBody: z.boolean().optional(),
  /**
   * Apply the request, then drop the answer (the connection is destroyed before any byte of it): the client
   * sees no answer although the exchange accepted the action (a push applied but unanswered).
   */
  dropAnswer: z.boolean().optional(),
  /**
   * Explorer only: the record lags by this much: `userDetails` lists only the transactions at least this old
   * (the explorer's lag is not documented).
   */
  recordLagMs: z.number().int().min(0).max(86_400_000).optional(),
  /**
   * Explorer only: the record lies: this many accepted `scheduleCancel` transactions that lapsed, earlier in
   * the UTC day, are added to `userDetails` (no order was cancelled for them: a wrong or hostile explorer).
   */
  recordFakeLapses: z.number().int().min(0).max(50).optional(),
  /**
   * Exchange only: the post-only window after a network upgrade. Every order but an Alo (post-only) one is refused
   * with "Only post-only orders allowed immediately after a network upgrade" (hummingbot#6730, #6800); cancels and
   * schedules pass. Set it through POST /admin/faults `{"endpoint":"exchange","fault":{"postOnlyWindow":true}}`.
   */
  postOnlyWindow: z.boolean().optional(),
  /**
   * Exchange only: a fired schedule cancels the orders of the first perp dex and leaves those of builder-deployed
   * dexes. Whether the real fire reaches builder dexes is not documented (docs/exchange-behaviour.md, "Fires on
   * builder-deployed dexes"): off, the simulator's fire cancels every dex's orders; on, the first dex's only.
   * Set it through POST /admin/faults `{"endpoint":"exchange","fault":{"fireMissesBuilderDexes":true}}`.
   */
  fireMissesBuilderDexes: z.boolean().optional(),
  /**
   * Only requests of these types are faulted (the info/explorer `type`, or the exchange action's `type`,
   * e.g. ["historicalOrders"], ["extraAgents"], ["cancel"]); every other request passes. Default: all.
   */
  types: z.array(z.string().min(1)).min(1).optional(),
  /**
   * The answer's `Date` header off the simulator's clock by this much (ms; a proxy or CDN with a wrong clock in
   * front of the exchange). The request is processed as usual: only the header lies.
   */
  dateOffsetMs: z
    .number()
    .int()
    .min(-10 * 365 * 86_400_000)
    .max(10 * 365 * 86_400_000)
    .optional(),
  /** The answer's `Date` header, verbatim (an absurd or malformed one: `Sat, 13 Sep 275760 00:00:00 GMT`). */
  dateValue: z.string().max(200).optional(),
  /** The Date fault lasts this long (ms of the simulator's clock) from when it was set, then the Date is true again. */
  dateForMs: z.number().int().min(0).max(86_400_000).optional(),
});
export type FaultSpec = z.infer<typeof FaultSpec>;

export type FaultTarget = SimEndpoint | "all";
export const ENDPOINTS: readonly SimEndpoint[] = ["exchange", "info", "evm", "explorer"];

export interface Faults {
  set(endpoint: FaultTarget, fault: FaultSpec): void;
  clear(endpoint?: FaultTarget): void;
  get(endpoint: SimEndpoint): FaultSpec;
}

/** What the server does with one request, decided before the handler runs. */
export type FaultDecision =
  | { kind: "blackhole" }
  | { kind: "reset"; latencyMs: number }
  | { kind: "status"; status: number; body: string; contentType: string; latencyMs: number }
  | { kind: "pass"; latencyMs: number }
  /** run the handler (the action is applied), then destroy the connection without answering */
  | { kind: "drop"; latencyMs: number };

export const HUGE_BODY_BYTES = 4 * 1024 * 1024;

export class FaultController implements Faults {
  readonly #specs = new Map<SimEndpoint, FaultSpec>();
  /** when each endpoint's fault was set (the simulator's clock): a `dateForMs` window starts there */
  readonly #setAt = new Map<SimEndpoint, number>();
  readonly #rng: Rng;
  readonly #now: () => number;

  /** `now`: the simulator's clock (the Date fault's window is measured on it). */
  constructor(seed = 1, now: () => number = () => Date.now()) {
    this.#rng = createRng(deriveSeed(seed, "faults"));
    this.#now = now;
  }

  set(endpoint: FaultTarget, fault: FaultSpec): void {
    const spec = parse(FaultSpec, fault, "fault spec");
    for (const e of targets(endpoint)) {
      this.#specs.set(e, { ...spec });
      this.#setAt.set(e, this.#now());
    }
  }

  clear(endpoint: FaultTarget = "all"): void {
    for (const e of targets(endpoint)) this.#specs.delete(e);
  }

  /**
   * The `Date` header for an answer of `endpoint` at `now` (the simulator's clock): the true one, or what the
   * endpoint's Date fault says while its window lasts.
   */
  dateHeader(endpoint: SimEndpoint | null, now: number): string {
    const f = endpoint ? this.#specs.get(endpoint) : undefined;
    const active =
      f !== undefined &&
      (f.dateOffsetMs !== undefined || f.dateValue !== undefined) &&
      (f.dateForMs === undefined || now - (this.#setAt.get(endpoint!) ?? now) < f.dateForMs);
    if (!active) return new Date(now).toUTCString();
    if (f.dateValue !== undefined) return f.dateValue;
    const shifted = new Date(now + (f.dateOffsetMs ?? 0));
    return Number.isFinite(shifted.getTime()) ? shifted.toUTCString() : "Invalid Date";
  }

  get(endpoint: SimEndpoint): FaultSpec {
    return { ...(this.#specs.get(endpoint) ?? {}) };
  }

  /** Order: blackhole, reset, 429, 5xx, malformed, wrong shape, huge body; latency delays whatever comes. */
  /** True when the endpoint's fault applies only to some request types (the body must be read first). */
  needsType(endpoint: SimEndpoint): boolean {
    return this.#specs.get(endpoint)?.types !== undefined;
  }

  decide(endpoint: SimEndpoint, requestType?: string): FaultDecision {
    const f = this.#specs.get(endpoint);
    if (!f) return { kind: "pass", latencyMs: 0 };
    // (a Date fault alone lets the request through: only the answer's header lies)
    if (f.types && (requestType === undefined || !f.types.includes(requestType))) {
      return { kind: "pass", latencyMs: 0 };
    }
    const latencyMs = f.latencyMs ?? 0;
    if (f.blackhole) return { kind: "blackhole" };
    if (f.resetRate && this.#rng() < f.resetRate) return { kind: "reset", latencyMs };
    if (f.rateLimit) return { kind: "status", ...tooManyRequests(), latencyMs };
    if (f.errorRate && this.#rng() < f.errorRate) {
      return {
        kind: "status",
        status: f.errorStatus ?? 500,
        body: "null",
        contentType: JSON_TYPE,
        latencyMs,
      };
    }
    if (f.malformed) {
      const body = endpoint === "evm" ? '{"jsonrpc":"2.0","id":1,"resu' : '{"status":"ok","respo';
      return { kind: "status", status: 200, body, contentType: JSON_TYPE, latencyMs };
    }
    if (f.wrongShape) {
      const body =
        endpoint === "evm" ? '{"jsonrpc":"2.0","id":1,"result":{"hello":"world"}}' : '{"hello":"world"}';
      return { kind: "status", status: 200, body, contentType: JSON_TYPE, latencyMs };
    }
    if (f.hugeBody) {
      return { kind: "status", status: 200, body: hugeBody(), contentType: JSON_TYPE, latencyMs };
    }
    if (f.dropAnswer) return { kind: "drop", latencyMs };
    return { kind: "pass", latencyMs };
  }
}

const JSON_TYPE = "application/json";

/** The real 429 body was never captured (docs/exchange-behaviour.md §5); we send a short JSON string. */
export function tooManyRequests(): { status: number; body: string; contentType: string } {
  return { status: 429, body: '"Too many requests"', contentType: JSON_TYPE };
}

let huge: string | undefined;
function hugeBody(): string {
  huge ??= `[${Array.from({ length: HUGE_BODY_BYTES / 16 }, () => '"0123456789abc"').join(",")}]`;
  return huge;
}

function targets(endpoint: FaultTarget): readonly SimEndpoint[] {
  if (endpoint === "all") return ENDPOINTS;
  if (!ENDPOINTS.includes(endpoint)) {
    throw new ArgumentError(
      `fault endpoint must be exchange, info, evm, explorer or all, got ${JSON.stringify(endpoint)}`,
    );
  }
  return [endpoint];
}
