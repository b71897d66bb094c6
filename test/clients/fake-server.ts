/**
 * A fake model server on 127.0.0.1 for the real-client tests: it records
 * every request it receives (method, path, headers, parsed JSON body) and
 * answers each with the handler the wire format gives (server-sent events
 * for all three clients). It listens on loopback only and on a free port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined when the body was empty or not JSON). */
  body: unknown;
}

/** Answers one request; `requests` holds every request so far, this one last. */
export type Answer = (
  req: RecordedRequest,
  res: ServerResponse,
  requests: readonly RecordedRequest[],
) => void;

export interface FakeServer {
  /** http://127.0.0.1:PORT */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeServer(answer: Answer): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = raw === "" ? undefined : JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body,
      };
      requests.push(recorded);
      try {
        answer(recorded, res, requests);
      } catch (e) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(`fake server: ${e instanceof Error ? e.message : String(e)}`);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes server-sent events: each `[event, data]` as `event: E\ndata: JSON\n\n` (no event line when E is null). */
export function sendEvents(
  res: ServerResponse,
  events: ReadonlyArray<readonly [string | null, unknown]>,
): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [event, data] of events) {
    const payload = typeof data === "string" ? data : JSON.stringify(data);
    res.write(`${event === null ? "" : `event: ${event}\n`}data: ${payload}\n\n`);
  }
  res.end();
}
