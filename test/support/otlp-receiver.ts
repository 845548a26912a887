/**
 * A loopback OTLP/HTTP trace receiver for tests: accepts `POST /v1/traces` with
 * `application/x-protobuf` bodies (an ExportTraceServiceRequest) and decodes them with a protobuf
 * wire reader written from the OTLP definitions (opentelemetry-proto: collector/trace/v1,
 * trace/v1, common/v1, resource/v1). Only the fields the tests read are decoded; the rest are
 * skipped by wire type, as protobuf allows.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  /** Status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** Status message ('' when none). */
  statusMessage: string;
  /** The resource's `service.name`. */
  service: string;
}

type Field = { no: number; wire: number; varint?: bigint; bytes?: Buffer; fixed?: Buffer };

/** The fields of one protobuf message, in order (wire types 0, 1, 2 and 5). */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error('protobuf: truncated varint');
      const b = buf[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, varint: varint() });
    else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      out.push({ no, wire, fixed: buf.subarray(i, i + n) });
      i += n;
    } else if (wire === 2) {
      const n = Number(varint());
      if (i + n > buf.length) throw new Error('protobuf: truncated length-delimited field');
      out.push({ no, wire, bytes: buf.subarray(i, i + n) });
      i += n;
    } else throw new Error(`protobuf: unsupported wire type ${wire}`);
  }
  return out;
}

const all = (f: Field[], no: number): Buffer[] => f.filter((x) => x.no === no && x.bytes).map((x) => x.bytes!);
const one = (f: Field[], no: number): Field | undefined => f.find((x) => x.no === no);
const str = (f: Field[], no: number): string => one(f, no)?.bytes?.toString('utf8') ?? '';
const hex = (f: Field[], no: number): string => one(f, no)?.bytes?.toString('hex') ?? '';

/** AnyValue: string_value 1, bool_value 2, int_value 3, double_value 4. */
function anyValue(buf: Buffer): string | number | boolean {
  const f = fields(buf);
  const s = one(f, 1);
  if (s?.bytes) return s.bytes.toString('utf8');
  const b = one(f, 2);
  if (b?.varint !== undefined) return b.varint !== 0n;
  const n = one(f, 3);
  if (n?.varint !== undefined) return Number(BigInt.asIntN(64, n.varint));
  const d = one(f, 4);
  if (d?.fixed) return d.fixed.readDoubleLE(0);
  return '';
}

/** KeyValue list: key 1, value 2. */
function attributes(list: Buffer[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list) {
    const f = fields(kv);
    const v = all(f, 2)[0];
    out[str(f, 1)] = v ? anyValue(v) : '';
  }
  return out;
}

/** ExportTraceServiceRequest → its spans (resource_spans 1 → resource 1, scope_spans 2 → spans 2). */
export function decodeTraceRequest(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of all(fields(body), 1)) {
    const rsf = fields(rs);
    const resource = all(rsf, 1)[0];
    const service = String(resource ? (attributes(all(fields(resource), 1))['service.name'] ?? '') : '');
    for (const ss of all(rsf, 2)) {
      for (const sp of all(fields(ss), 2)) {
        const f = fields(sp);
        const status = all(f, 15)[0];
        spans.push({
          traceId: hex(f, 1),
          spanId: hex(f, 2),
          parentSpanId: hex(f, 4),
          name: str(f, 5),
          kind: Number(one(f, 6)?.varint ?? 0n),
          startNs: one(f, 7)?.fixed?.readBigUInt64LE(0) ?? 0n,
          endNs: one(f, 8)?.fixed?.readBigUInt64LE(0) ?? 0n,
          attributes: attributes(all(f, 9)),
          statusCode: status ? Number(one(fields(status), 3)?.varint ?? 0n) : 0,
          statusMessage: status ? str(fields(status), 2) : '',
          service,
        });
      }
    }
  }
  return spans;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Requests refused (not protobuf, not /v1/traces): a test asserts there were none. */
  readonly refused: string[] = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = http.createServer();
    const r = new OtlpReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces' || req.headers['content-type'] !== 'application/x-protobuf') {
          r.refused.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
          res.writeHead(404).end();
          return;
        }
        try {
          r.spans.push(...decodeTraceRequest(Buffer.concat(chunks)));
          // an empty ExportTraceServiceResponse
          res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
        } catch (err) {
          r.refused.push(`undecodable: ${(err as Error).message}`);
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
