/**
 * A tiny HTTP server for the client tests: listens on 127.0.0.1:0, records every request, and answers with
 * scripted responses (status, headers, body, delay, or a destroyed socket). Deliberately minimal: the real
 * exchange behaviour lives in the simulator (src/sim); this only lets a test say exactly what comes back.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type ScriptedResponse = {
  /** default 200 */
  status?: number;
  headers?: Record<string, string>;
  /** a string is sent as is; anything else as JSON. Default: `{"status":"ok","response":{"type":"default"}}` */
  body?: unknown;
  /** wait this long before answering (ms) */
  delayMs?: number;
  /** destroy the socket instead of answering (after delayMs) */
  destroy?: boolean;
};

export type RecordedRequest = {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  bodyText: string;
  /** parsed body, or undefined when not JSON */
  json: unknown;
};

export type Handler = (
  request: RecordedRequest,
  index: number,
) => ScriptedResponse | Promise<ScriptedResponse>;

export type RecordedServer = {
  url: string;
  requests: RecordedRequest[];
  /** requests being handled right now, and the most seen at once */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** TCP connections accepted so far (keep-alive reuses them) */
  readonly connections: number;
  /** queue responses, used in order before the handler */
  push(...responses: ScriptedResponse[]): void;
  setHandler(handler: Handler): void;
  close(): Promise<void>;
};

export const OK_BODY = { status: "ok", response: { type: "default" } };

export async function startRecordedServer({ handler }: { handler?: Handler } = {}): Promise<RecordedServer> {
  const requests: RecordedRequest[] = [];
  const queue: ScriptedResponse[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let current: Handler = handler ?? (() => ({}));
  let inFlight = 0;
  let maxInFlight = 0;
  let connections = 0;

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const bodyText = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try {
        json = JSON.parse(bodyText);
      } catch {
        json = undefined;
      }
      const recorded: RecordedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        bodyText,
        json,
      };
      const index = requests.push(recorded) - 1;
      try {
        const scripted = queue.shift() ?? (await current(recorded, index));
        if (scripted.delayMs) await wait(scripted.delayMs);
        if (scripted.destroy) {
          req.socket.destroy();
          return;
        }
        const body =
          scripted.body === undefined
            ? JSON.stringify(OK_BODY)
            : typeof scripted.body === "string"
              ? scripted.body
              : JSON.stringify(scripted.body);
        const isText = typeof scripted.body === "string";
        res.writeHead(scripted.status ?? 200, {
          "content-type": isText ? "text/plain; charset=utf-8" : "application/json",
          ...scripted.headers,
        });
        res.end(body);
      } finally {
        inFlight--;
      }
    });
  });
  server.on("connection", (socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get connections() {
      return connections;
    },
    push(...responses) {
      queue.push(...responses);
    },
    setHandler(h) {
      current = h;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
