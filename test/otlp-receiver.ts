/**
 * A local OTLP/HTTP receiver for tests: an HTTP server on 127.0.0.1 (port 0)
 * that takes `/v1/logs` and `/v1/metrics` (or any path) in either encoding
 * the OTLP exporters send, `application/x-protobuf` (decoded here from the
 * protobuf wire format, for the fields of the OTLP logs and metrics messages
 * the tests read) or `application/json`, and keeps each request's headers,
 * raw bytes and what they decode to, in one shape for both encodings.
 */
import { createServer } from "node:http";
import { gunzipSync } from "node:zlib";
import type { AddressInfo } from "node:net";

export type AttrValue = string | number | boolean | AttrValue[] | null;
export type Attrs = Record<string, AttrValue>;

export interface ReceivedLog {
  resource: Attrs;
  scope: string;
  eventName?: string;
  severityNumber?: number;
  body?: AttrValue;
  attributes: Attrs;
}

export interface ReceivedPoint {
  attributes: Attrs;
  /** A sum's value. */
  value?: number;
  /** A histogram's count and sum. */
  count?: number;
  sum?: number;
}

export interface ReceivedMetric {
  resource: Attrs;
  scope: string;
  name: string;
  unit: string;
  kind: "sum" | "histogram" | "gauge" | "other";
  points: ReceivedPoint[];
}

export interface ReceivedRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  contentType: string;
  raw: Buffer;
}

export interface OtlpReceiver {
  url: string;
  requests: ReceivedRequest[];
  logs(): ReceivedLog[];
  metrics(): ReceivedMetric[];
  close(): Promise<void>;
}

// --- protobuf wire format ---------------------------------------------------------------------------

interface Field {
  n: number;
  wt: number;
  /** varint (wt 0), fixed64 (wt 1) and fixed32 (wt 5) as their bytes or value; length-delimited (wt 2) as bytes. */
  int?: bigint;
  bytes?: Buffer;
}

function varint(buf: Buffer, at: number): [bigint, number] {
  let out = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[at++]!;
    out |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [out, at];
    shift += 7n;
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  while (at < buf.length) {
    const [tag, next] = varint(buf, at);
    at = next;
    const n = Number(tag >> 3n);
    const wt = Number(tag & 7n);
    if (wt === 0) {
      const [v, after] = varint(buf, at);
      out.push({ n, wt, int: v });
      at = after;
    } else if (wt === 1) {
      out.push({ n, wt, bytes: buf.subarray(at, at + 8) });
      at += 8;
    } else if (wt === 5) {
      out.push({ n, wt, bytes: buf.subarray(at, at + 4) });
      at += 4;
    } else if (wt === 2) {
      const [len, after] = varint(buf, at);
      out.push({ n, wt, bytes: buf.subarray(after, after + Number(len)) });
      at = after + Number(len);
    } else throw new Error(`protobuf wire type ${wt} not read`);
  }
  return out;
}

const all = (fs: Field[], n: number) => fs.filter((f) => f.n === n);
const one = (fs: Field[], n: number) => fs.find((f) => f.n === n);
const str = (f: Field | undefined) => (f?.bytes ? f.bytes.toString("utf8") : "");

function anyValue(buf: Buffer): AttrValue {
  const f = fields(buf)[0];
  if (!f) return null;
  switch (f.n) {
    case 1:
      return str(f);
    case 2:
      return f.int === 1n;
    case 3:
      return Number(BigInt.asIntN(64, f.int!));
    case 4:
      return f.bytes!.readDoubleLE(0);
    case 5:
      return all(fields(f.bytes!), 1).map((v) => anyValue(v.bytes!));
    default:
      return null;
  }
}

function pbAttrs(fs: Field[], n: number): Attrs {
  const out: Attrs = {};
  for (const kv of all(fs, n)) {
    const k = fields(kv.bytes!);
    const v = one(k, 2);
    out[str(one(k, 1))] = v ? anyValue(v.bytes!) : null;
  }
  return out;
}

const resourceOf = (f: Field | undefined): Attrs => (f ? pbAttrs(fields(f.bytes!), 1) : {});
const scopeOf = (f: Field | undefined): string => (f ? str(one(fields(f.bytes!), 1)) : "");

function pbLogs(buf: Buffer): ReceivedLog[] {
  const out: ReceivedLog[] = [];
  for (const rl of all(fields(buf), 1)) {
    const r = fields(rl.bytes!);
    const resource = resourceOf(one(r, 1));
    for (const sl of all(r, 2)) {
      const s = fields(sl.bytes!);
      const scope = scopeOf(one(s, 1));
      for (const lr of all(s, 2)) {
        const l = fields(lr.bytes!);
        const body = one(l, 5);
        out.push({
          resource,
          scope,
          eventName: one(l, 12) ? str(one(l, 12)) : undefined,
          severityNumber: one(l, 2) ? Number(one(l, 2)!.int) : undefined,
          body: body ? anyValue(body.bytes!) : undefined,
          attributes: pbAttrs(l, 6),
        });
      }
    }
  }
  return out;
}

function pbPoint(buf: Buffer, histogram: boolean): ReceivedPoint {
  const p = fields(buf);
  if (histogram)
    return {
      attributes: pbAttrs(p, 9),
      count: Number(one(p, 4)?.bytes?.readBigUInt64LE(0) ?? 0n),
      sum: one(p, 5)?.bytes?.readDoubleLE(0),
    };
  const asDouble = one(p, 4);
  const asInt = one(p, 6);
  return {
    attributes: pbAttrs(p, 7),
    value: asDouble ? asDouble.bytes!.readDoubleLE(0) : Number(asInt?.bytes?.readBigInt64LE(0) ?? 0n),
  };
}

function pbMetrics(buf: Buffer): ReceivedMetric[] {
  const out: ReceivedMetric[] = [];
  for (const rm of all(fields(buf), 1)) {
    const r = fields(rm.bytes!);
    const resource = resourceOf(one(r, 1));
    for (const sm of all(r, 2)) {
      const s = fields(sm.bytes!);
      const scope = scopeOf(one(s, 1));
      for (const mf of all(s, 2)) {
        const m = fields(mf.bytes!);
        const data = one(m, 7) ?? one(m, 9) ?? one(m, 5);
        const kind = one(m, 7) ? "sum" : one(m, 9) ? "histogram" : one(m, 5) ? "gauge" : "other";
        out.push({
          resource,
          scope,
          name: str(one(m, 1)),
          unit: str(one(m, 3)),
          kind,
          points: data ? all(fields(data.bytes!), 1).map((p) => pbPoint(p.bytes!, kind === "histogram")) : [],
        });
      }
    }
  }
  return out;
}

// --- OTLP/JSON -------------------------------------------------------------------------------------

type J = Record<string, unknown>;

function jsonValue(v: J | undefined): AttrValue {
  if (!v) return null;
  if ("stringValue" in v) return v.stringValue as string;
  if ("boolValue" in v) return v.boolValue as boolean;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("arrayValue" in v) return (((v.arrayValue as J).values as J[]) ?? []).map(jsonValue);
  return null;
}

function jsonAttrs(list: unknown): Attrs {
  const out: Attrs = {};
  for (const kv of (list as J[] | undefined) ?? []) out[kv.key as string] = jsonValue(kv.value as J);
  return out;
}

function jsonLogs(doc: J): ReceivedLog[] {
  return ((doc.resourceLogs as J[]) ?? []).flatMap((rl) =>
    ((rl.scopeLogs as J[]) ?? []).flatMap((sl) =>
      ((sl.logRecords as J[]) ?? []).map((l) => ({
        resource: jsonAttrs((rl.resource as J | undefined)?.attributes),
        scope: ((sl.scope as J | undefined)?.name as string) ?? "",
        eventName: l.eventName as string | undefined,
        severityNumber: l.severityNumber as number | undefined,
        body: jsonValue(l.body as J | undefined),
        attributes: jsonAttrs(l.attributes),
      })),
    ),
  );
}

function jsonMetrics(doc: J): ReceivedMetric[] {
  return ((doc.resourceMetrics as J[]) ?? []).flatMap((rm) =>
    ((rm.scopeMetrics as J[]) ?? []).flatMap((sm) =>
      ((sm.metrics as J[]) ?? []).map((m): ReceivedMetric => {
        const kind = m.sum ? "sum" : m.histogram ? "histogram" : m.gauge ? "gauge" : "other";
        const data = (m.sum ?? m.histogram ?? m.gauge) as J | undefined;
        return {
          resource: jsonAttrs((rm.resource as J | undefined)?.attributes),
          scope: ((sm.scope as J | undefined)?.name as string) ?? "",
          name: m.name as string,
          unit: (m.unit as string) ?? "",
          kind,
          points: ((data?.dataPoints as J[]) ?? []).map((p) =>
            kind === "histogram"
              ? { attributes: jsonAttrs(p.attributes), count: Number(p.count), sum: Number(p.sum) }
              : { attributes: jsonAttrs(p.attributes), value: Number(p.asInt ?? p.asDouble) },
          ),
        };
      }),
    ),
  );
}

// --- the server -------------------------------------------------------------------------------------

function decoded(r: ReceivedRequest, signal: "logs" | "metrics"): unknown[] {
  const json = r.contentType.includes("json");
  if (signal === "logs") return json ? jsonLogs(JSON.parse(r.raw.toString("utf8")) as J) : pbLogs(r.raw);
  return json ? jsonMetrics(JSON.parse(r.raw.toString("utf8")) as J) : pbMetrics(r.raw);
}

/** Starts a receiver; requests whose path ends in `/logs` are log exports, in `/metrics` metric exports. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const raw = req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
      const contentType = req.headers["content-type"] ?? "";
      requests.push({ path: req.url ?? "/", headers: req.headers, contentType, raw });
      res.writeHead(200, { "content-type": contentType.includes("json") ? "application/json" : contentType });
      res.end(contentType.includes("json") ? "{}" : Buffer.alloc(0));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    logs: () =>
      requests.filter((r) => /logs$/.test(r.path)).flatMap((r) => decoded(r, "logs") as ReceivedLog[]),
    metrics: () =>
      requests
        .filter((r) => /metrics$/.test(r.path))
        .flatMap((r) => decoded(r, "metrics") as ReceivedMetric[]),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
