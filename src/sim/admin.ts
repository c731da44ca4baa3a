/**
 * The admin route, answered only to loopback peers: GET /admin/state, POST /admin/faults, POST /admin/clock
 * (manual clock only), POST /admin/users, POST /admin/marks, POST /admin/tick, POST /admin/agents (approve,
 * same-name deregistration), POST /admin/agents/remove, POST /admin/book (a coin's spread and depth).
 */
import { z } from "zod";
import { ManualClock } from "../core/clock.js";
import { BaseError } from "../core/errors/base.js";
import { parse } from "../core/errors/parse.js";
import type { HandlerResult } from "./exchange.js";
import { ENDPOINTS, type FaultController, FaultSpec } from "./faults.js";
import type { SimUserInput } from "./records.js";
import type { SimStore } from "./state.js";
import { storeSummary } from "./summary.js";

const FaultsBody = z.strictObject({
  endpoint: z.enum(["exchange", "info", "evm", "explorer", "all"]),
  /** null or absent clears the endpoint's faults */
  fault: FaultSpec.nullable().optional(),
});
const ClockBody = z.union([
  z.strictObject({ advanceMs: z.number().int().min(0) }),
  z.strictObject({ setMs: z.number().int().min(0) }),
]);
const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, { error: "must be 0x followed by 40 hex digits" });
/** approveAgent as the exchange applies it: the same name deregisters the previous agent of that name. */
const AgentBody = z.strictObject({
  user: Address,
  agent: Address,
  name: z.string().default(""),
  /** ms; default now + 180 days */
  validUntil: z.number().int().min(0).optional(),
});
const RemoveAgentBody = z.strictObject({ agent: Address });
const MarkBody = z.strictObject({ coin: z.string().min(1), px: z.union([z.number(), z.string()]) });
/** A coin's simulated book: spread around the mark (bps) and depth per order (coins; null = unlimited). */
const BookBody = z.strictObject({
  coin: z.string().min(1),
  spreadBps: z.number().int().min(0).max(5000).optional(),
  depth: z.number().min(0).nullable().optional(),
});

export type AdminContext = {
  store: SimStore;
  faults: FaultController;
  addUser(u: SimUserInput): void;
};

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

export function handleAdmin(ctx: AdminContext, method: string, path: string, rawBody: string): HandlerResult {
  try {
    if (method === "GET" && path === "/admin/state") {
      const faults = Object.fromEntries(ENDPOINTS.map((e) => [e, ctx.faults.get(e)]));
      return ok({ ...storeSummary(ctx.store), faults });
    }
    if (method !== "POST") return error(405, `${method} ${path} is not an admin route`);
    const body = readJson(rawBody);
    switch (path) {
      case "/admin/faults": {
        const b = parse(FaultsBody, body, "admin faults body");
        if (b.fault) ctx.faults.set(b.endpoint, b.fault);
        else ctx.faults.clear(b.endpoint);
        return ok({ ok: true, faults: Object.fromEntries(ENDPOINTS.map((e) => [e, ctx.faults.get(e)])) });
      }
      case "/admin/clock": {
        const clock = ctx.store.clock;
        if (!(clock instanceof ManualClock)) {
          return error(409, "the simulator runs on the real clock; start it with a ManualClock to move time");
        }
        const b = parse(ClockBody, body, "admin clock body");
        const now = "advanceMs" in b ? clock.advance(b.advanceMs) : clock.set(b.setMs);
        return ok({ ok: true, now });
      }
      case "/admin/users": {
        const users = (Array.isArray(body) ? body : [body]) as SimUserInput[];
        for (const u of users) ctx.addUser(u);
        return ok({ ok: true, users: users.length });
      }
      case "/admin/marks": {
        const b = parse(MarkBody, body, "admin marks body");
        ctx.store.setMark(b.coin, b.px);
        return ok({ ok: true });
      }
      case "/admin/book": {
        const b = parse(BookBody, body, "admin book body");
        const book = ctx.store.setBook(b.coin, {
          ...(b.spreadBps !== undefined ? { spreadBps: b.spreadBps } : {}),
          ...(b.depth !== undefined ? { depth: b.depth } : {}),
        });
        return ok({ ok: true, book });
      }
      case "/admin/agents": {
        const b = parse(AgentBody, body, "admin agents body");
        const agent = ctx.store.approveAgent({
          user: b.user,
          agent: b.agent,
          name: b.name,
          ...(b.validUntil !== undefined ? { validUntil: b.validUntil } : {}),
        });
        return ok({ ok: true, agent });
      }
      case "/admin/agents/remove": {
        const b = parse(RemoveAgentBody, body, "admin agents/remove body");
        return ok({ ok: true, removed: ctx.store.removeAgent(b.agent) });
      }
      case "/admin/tick":
        ctx.store.tick();
        return ok({ ok: true });
      default:
        return error(404, `no admin route ${path}`);
    }
  } catch (e) {
    const message = e instanceof BaseError || e instanceof Error ? e.message : String(e);
    return error(400, message);
  }
}

function readJson(raw: string): unknown {
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw);
  } catch {
    throw new BaseError("The admin body is not valid JSON.");
  }
}

function ok(body: unknown): HandlerResult {
  return { status: 200, contentType: "application/json", body: JSON.stringify(body) };
}

function error(status: number, message: string): HandlerResult {
  return { status, contentType: "application/json", body: JSON.stringify({ error: message }) };
}
