/**
 * The local control channel (docs/operations.md, "The control channel"): how `hl-deadman reset` and
 * `hl-deadman drill` reach the running daemon, which holds the state directory's lock.
 *
 * One Unix socket, `<stateDir>/control.sock`, mode 0600, inside the state directory (0700, docs/security.md):
 * only the daemon's own user (and root) can connect, which is the authentication: file ownership, as for the
 * engine's guard socket, and no secret to leak. One request per connection, one JSON line each way, bounded
 * (4 KiB, 5 s to send it, a few connections at once). Every command, accepted or refused, is logged and appended to
 * the audit trail before it is carried out.
 */
import { chmod, lstat, unlink } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import type { Logger } from "../core/logger.js";
import type { Timers } from "../core/runtime.js";
import type { AuditEntry } from "../surface/audit/record.js";

export const CONTROL_SOCKET = "control.sock";
export const CONTROL_SOCKET_MODE = 0o600;
export const CONTROL_PROTOCOL = 1;
export const MAX_CONTROL_LINE = 4096;
const MAX_CONNECTIONS = 4;
const REQUEST_WAIT_MS = 5_000;

export const controlSocketPath = (stateDir: string) => join(stateDir, CONTROL_SOCKET);

/** A request: `{"v":1,"command":"reset","account":"0x…","by":"…"}`. */
export type ControlRequest = {
  v: number;
  command: string;
  account?: string | undefined;
  /** who asks, as the client says it (its user name and pid): for the log and the audit trail */
  by?: string | undefined;
  /** command-specific options */
  options?: Record<string, unknown> | undefined;
};

export type ControlAnswer =
  | { ok: true; result: Record<string, unknown> }
  /** `stopsRest`: a drill refused because reduce-only stops rest and `cancelStops` was not given (exit 77) */
  | { ok: false; error: string; stopsRest?: boolean };

/** A command's handler: its answer (a refusal is `ok: false` with the reason). */
export type ControlHandler = (request: ControlRequest) => Promise<ControlAnswer> | ControlAnswer;

export function parseControlRequest(line: string): ControlRequest | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return "the request is not JSON";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return "the request is not a JSON object";
  const r = value as Record<string, unknown>;
  if (r.v !== CONTROL_PROTOCOL)
    return `protocol version ${JSON.stringify(r.v)}; this daemon speaks ${CONTROL_PROTOCOL}`;
  if (typeof r.command !== "string" || !/^[a-z-]{1,20}$/.test(r.command)) return "no valid command";
  if (r.account !== undefined && (typeof r.account !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(r.account)))
    return "the account is not a 0x address";
  if (r.by !== undefined && (typeof r.by !== "string" || r.by.length > 100))
    return "`by` is not a short string";
  if (
    r.options !== undefined &&
    (typeof r.options !== "object" || r.options === null || Array.isArray(r.options))
  )
    return "`options` is not an object";
  return {
    v: CONTROL_PROTOCOL,
    command: r.command,
    account: typeof r.account === "string" ? r.account.toLowerCase() : undefined,
    by: typeof r.by === "string" ? r.by : undefined,
    options: r.options as Record<string, unknown> | undefined,
  };
}

export type ControlServer = { readonly path: string; close(): Promise<void> };

/**
 * Listens on `<stateDir>/control.sock`. A socket left by a daemon that died is replaced (the state directory's
 * lock makes this daemon the only one); any other file there is an error naming it.
 */
export async function startControlServer(params: {
  stateDir: string;
  handlers: Readonly<Record<string, ControlHandler>>;
  logger: Logger;
  timers: Timers;
  audit: (entry: AuditEntry) => void;
}): Promise<ControlServer> {
  const { handlers, logger, timers, audit } = params;
  const path = controlSocketPath(params.stateDir);
  const log = logger.child({ module: "control" });
  const existing = await lstat(path).catch(() => null);
  if (existing && !existing.isSocket())
    throw new Error(`${path} exists and is not a socket; it is not the daemon's to delete: move it away`);
  if (existing) await unlink(path);
  const sockets = new Set<Socket>();

  const answer = (socket: Socket, a: ControlAnswer) => {
    socket.end(`${JSON.stringify(a)}\n`);
  };

  const serve = async (socket: Socket, line: string) => {
    const request = parseControlRequest(line);
    if (typeof request === "string") {
      log.warn({ event: "control.refused", reason: request }, `control request refused: ${request}`);
      audit({ type: "control.refused", data: { reason: request } });
      return answer(socket, { ok: false, error: request });
    }
    const handler = handlers[request.command];
    const by = request.by ?? "unnamed";
    const fields = { command: request.command, account: request.account ?? null, by };
    if (!handler) {
      const error = `unknown command ${request.command} (this daemon knows ${Object.keys(handlers).join(", ")})`;
      log.warn({ event: "control.refused", ...fields, reason: error }, `control request refused: ${error}`);
      audit({ type: "control.refused", account: request.account, data: { ...fields, reason: error } });
      return answer(socket, { ok: false, error });
    }
    // Said and recorded before it is carried out: a command that crashes the daemon is still on record.
    log.warn(
      { event: "control.command", ...fields },
      `control: ${request.command} ${request.account ?? ""} by ${by}`,
    );
    audit({
      type: "control.command",
      account: request.account,
      data: { ...fields, options: request.options ?? {} },
    });
    let result: ControlAnswer;
    try {
      result = await handler(request);
    } catch (error) {
      result = { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    log.warn(
      { event: "control.answer", ...fields, ok: result.ok, ...(result.ok ? {} : { error: result.error }) },
      `control: ${request.command} ${result.ok ? "done" : `refused: ${result.error}`}`,
    );
    answer(socket, result);
  };

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    if (sockets.size > MAX_CONNECTIONS)
      return answer(socket, { ok: false, error: "busy: too many control connections" });
    socket.setEncoding("utf8");
    let buffer = "";
    let taken = false;
    const wait = timers.after(REQUEST_WAIT_MS, () => {
      if (!taken) answer(socket, { ok: false, error: `no request within ${REQUEST_WAIT_MS / 1000} s` });
    });
    socket.on("close", () => wait.cancel());
    socket.on("data", (chunk: string) => {
      if (taken) return;
      buffer += chunk;
      const nl = buffer.indexOf("\n");
      if (nl < 0 && buffer.length <= MAX_CONTROL_LINE) return;
      taken = true;
      wait.cancel();
      if (nl < 0 || nl > MAX_CONTROL_LINE)
        return answer(socket, { ok: false, error: `the request is longer than ${MAX_CONTROL_LINE} bytes` });
      void serve(socket, buffer.slice(0, nl));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  // The state directory is 0700: no other user could reach the socket in the instant before this chmod.
  await chmod(path, CONTROL_SOCKET_MODE);
  log.info(
    { event: "control.listening", path },
    `control channel on ${path} (${Object.keys(handlers).join(", ")})`,
  );
  return {
    path,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await unlink(path).catch(() => undefined);
    },
  };
}

/** The client side (`hl-deadman reset`, `drill`): one request, one answer. */
export function controlRequest(
  stateDir: string,
  request: Omit<ControlRequest, "v">,
  {
    timeoutMs = 60_000,
    connect,
    timers,
  }: { timeoutMs?: number; connect: (path: string) => Socket; timers: Timers },
): Promise<ControlAnswer> {
  const path = controlSocketPath(stateDir);
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let text = "";
    let done = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      limit.cancel();
      socket.destroy();
      fn();
    };
    const limit = timers.after(timeoutMs, () =>
      finish(() => reject(new Error(`the daemon did not answer within ${timeoutMs / 1000} s`))),
    );
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(`${JSON.stringify({ v: CONTROL_PROTOCOL, ...request })}\n`));
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (text.length > 1024 * 1024) finish(() => reject(new Error("the daemon's answer is too long")));
    });
    socket.on("end", () =>
      finish(() => {
        try {
          const a = JSON.parse(text) as ControlAnswer;
          if (typeof a !== "object" || a === null || typeof a.ok !== "boolean")
            throw new Error("not an answer");
          resolve(a);
        } catch {
          reject(new Error(`the daemon's answer is not one: ${JSON.stringify(text.slice(0, 200))}`));
        }
      }),
    );
    socket.on("error", (error: NodeJS.ErrnoException) => finish(() => reject(error)));
  });
}
