/**
 * An S3-protocol server on loopback for tests, written from the AWS S3 API reference and the
 * SigV4 documentation: PutObject, GetObject, HeadObject, DeleteObject in path-style addressing
 * (`/<bucket>/<key>`), every request authenticated by AWS Signature Version 4, either the
 * Authorization header form or a presigned URL (query form). It refuses what S3 refuses
 * (InvalidAccessKeyId, SignatureDoesNotMatch, XAmzContentSHA256Mismatch, RequestTimeTooSkewed,
 * expired presigned URLs) with S3's XML error bodies. The signature check is deliberately written
 * separately from core/storage/sigv4.ts so that a mistake in one is caught by the other.
 */
import http from 'node:http';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { S3Settings } from '../../core/storage/s3';

export interface StoredObject {
  body: Buffer;
  contentType: string;
  metadata: Record<string, string>;
}

export interface S3TestServer {
  readonly endpoint: string;
  readonly port: number;
  readonly bucket: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly objects: Map<string, StoredObject>;
  /** Every request's operation and outcome (e.g. `PUT recordings/x.wav 200`). */
  readonly log: string[];
  /** The platform's settings for this server (path-style, a 2 s timeout), `over` replacing any of them. */
  settings(over?: Partial<S3Settings>): S3Settings;
  /** Whether a GET's single `Range` is served (206 with Content-Range, 416 InvalidRange past the end, as S3 does); false: answered whole (200), as a server that ignores Range. */
  ranges: boolean;
  /** Stops listening (connections refused) without forgetting objects; `resume()` listens again on the same port. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

const enc = (s: string) =>
  [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : '%' + b.toString(16).toUpperCase().padStart(2, '0'))).join('');
const hex = (d: Buffer | string) => createHash('sha256').update(d).digest('hex');
const mac = (k: Buffer | string, d: string) => createHmac('sha256', k).update(d).digest();

function errorXml(code: string, message: string, resource: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><Resource>${resource}</Resource><RequestId>test</RequestId></Error>`;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** `20130524T000000Z` → Date. */
function parseAmzDate(s: string): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  return m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) : null;
}

interface S3Keys {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** What a request signs with: its credential scope, the headers it signed, the signature, its time, its payload's hash. */
interface Signed {
  credential: string;
  signedHeaders: string;
  sig: string;
  dateTime: string;
  payloadHash: string;
}

/** A presigned URL's signature fields (the query form): unsigned payload, X-Amz-Expires not past. */
function presignedFields(q: Map<string, string>): Signed {
  if (q.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256') throw new Refusal(400, 'AuthorizationQueryParametersError', 'X-Amz-Algorithm must be AWS4-HMAC-SHA256');
  const dateTime = q.get('X-Amz-Date') ?? '';
  const expires = Number(q.get('X-Amz-Expires'));
  const at = parseAmzDate(dateTime);
  if (!at || !Number.isInteger(expires) || expires < 1 || expires > 604_800) throw new Refusal(400, 'AuthorizationQueryParametersError', 'bad X-Amz-Date or X-Amz-Expires');
  if (Date.now() > at.getTime() + expires * 1000) throw new Refusal(403, 'AccessDenied', 'Request has expired');
  return { credential: q.get('X-Amz-Credential') ?? '', signedHeaders: q.get('X-Amz-SignedHeaders') ?? '', sig: q.get('X-Amz-Signature') ?? '', dateTime, payloadHash: 'UNSIGNED-PAYLOAD' };
}

/** The Authorization header form's signature fields: x-amz-date within 15 minutes, the declared payload hash the body's. */
function headerFields(req: http.IncomingMessage, body: Buffer): Signed {
  const auth = req.headers.authorization ?? '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^,]+),\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) throw new Refusal(403, 'AccessDenied', 'missing or malformed Authorization header');
  const [, credential, signedHeaders, sig] = m as unknown as [string, string, string, string];
  const dateTime = String(req.headers['x-amz-date'] ?? '');
  const payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
  if (!payloadHash) throw new Refusal(400, 'InvalidRequest', 'missing x-amz-content-sha256');
  const at = parseAmzDate(dateTime);
  if (!at) throw new Refusal(403, 'AccessDenied', 'bad x-amz-date');
  if (Math.abs(Date.now() - at.getTime()) > 15 * 60_000) throw new Refusal(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== hex(body))
    throw new Refusal(400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed.");
  return { credential, signedHeaders, sig, dateTime, payloadHash };
}

/** Checks the request's SigV4 signature (either form) against this server's keys. */
function verify(keys: S3Keys, req: http.IncomingMessage, rawPath: string, query: [string, string][], body: Buffer): void {
  const q = new Map(query);
  const { credential, signedHeaders, sig, dateTime, payloadHash } = q.has('X-Amz-Signature') ? presignedFields(q) : headerFields(req, body);
  const { region } = keys;
  const [akid, date, credRegion, service, terminator] = credential.split('/');
  if (akid !== keys.accessKeyId) throw new Refusal(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  if (date !== dateTime.slice(0, 8) || credRegion !== region || service !== 's3' || terminator !== 'aws4_request') {
    throw new Refusal(400, 'AuthorizationHeaderMalformed', `credential scope ${credential.slice(akid.length + 1)} is wrong for this server (region ${region})`);
  }
  const canonical = `${req.method}\n${rawPath}\n${canonicalQuery(query)}\n${canonicalHeaders(req, signedHeaders)}\n${signedHeaders}\n${payloadHash}`;
  const scope = `${date}/${region}/s3/aws4_request`;
  const toSign = `AWS4-HMAC-SHA256\n${dateTime}\n${scope}\n${hex(canonical)}`;
  const key = mac(mac(mac(mac('AWS4' + keys.secretAccessKey, date), region), 's3'), 'aws4_request');
  const want = Buffer.from(createHmac('sha256', key).update(toSign).digest('hex'));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !timingSafeEqual(want, got)) {
    throw new Refusal(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');
  }
}

function canonicalHeaders(req: http.IncomingMessage, signedHeaders: string): string {
  const names = signedHeaders.split(';');
  if (!names.includes('host')) throw new Refusal(403, 'AccessDenied', 'host must be signed');
  return names
    .map((n) => {
      const v = req.headers[n];
      if (v === undefined) throw new Refusal(403, 'AccessDenied', `signed header ${n} is absent`);
      return `${n}:${(Array.isArray(v) ? v.join(',') : v).trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
}

function canonicalQuery(query: [string, string][]): string {
  return query
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => [enc(k), enc(v)])
    .sort((x, y) => (x[0]! === y[0]! ? (x[1]! < y[1]! ? -1 : 1) : x[0]! < y[0]! ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

type Answer = (status: number, headers?: Record<string, string>, payload?: Buffer | string) => void;

/** One object operation on an authenticated request: PUT, GET, HEAD, DELETE. */
function objectOp(objects: Map<string, StoredObject>, req: http.IncomingMessage, key: string, body: Buffer, out: Answer, ranges: boolean): void {
  switch (req.method) {
    case 'PUT': {
      const metadata: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (k.startsWith('x-amz-meta-') && typeof v === 'string') metadata[k.slice(11)] = v;
      objects.set(key, { body, contentType: String(req.headers['content-type'] ?? 'binary/octet-stream'), metadata });
      return out(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` });
    }
    case 'GET':
    case 'HEAD': {
      const o = objects.get(key);
      if (!o) throw new Refusal(404, 'NoSuchKey', 'The specified key does not exist.');
      const h: Record<string, string> = { 'content-type': o.contentType, 'content-length': String(o.body.length) };
      for (const [k, v] of Object.entries(o.metadata)) h[`x-amz-meta-${k}`] = v;
      const range = req.method === 'GET' && ranges ? rangeOf(req.headers.range, o.body.length) : null;
      if (range === 'unsatisfiable')
        return out(
          416,
          { 'content-type': 'application/xml' },
          `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidRange</Code><Message>The requested range is not satisfiable</Message><RangeRequested>${req.headers.range}</RangeRequested><ActualObjectSize>${o.body.length}</ActualObjectSize></Error>`,
        );
      if (range) {
        h['content-length'] = String(range.end - range.start + 1);
        h['content-range'] = `bytes ${range.start}-${range.end}/${o.body.length}`;
        return out(206, h, o.body.subarray(range.start, range.end + 1));
      }
      return out(200, h, o.body);
    }
    case 'DELETE':
      objects.delete(key);
      return out(204);
    default:
      throw new Refusal(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
  }
}

/** A GET's single byte range as S3 serves it (one `bytes=a-b`, `a-` or `-n`), else null (answered whole). */
function rangeOf(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header ?? '');
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') return Number(m[2]) === 0 || size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - Number(m[2])), end: size - 1 };
  const start = Number(m[1]);
  if (m[2] !== '' && Number(m[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(m[2] === '' ? size - 1 : Number(m[2]), size - 1) };
}

export async function startS3Server(opts: { port?: number; bucket?: string; region?: string; accessKeyId?: string; secretAccessKey?: string } = {}): Promise<S3TestServer> {
  const bucket = opts.bucket ?? 'recordings-test';
  const region = opts.region ?? 'us-east-1';
  const accessKeyId = opts.accessKeyId ?? 'AKIATESTPLATFORM0001';
  const secretAccessKey = opts.secretAccessKey ?? 'test-secret-key/with+special=chars0123456789';
  const keys: S3Keys = { region, accessKeyId, secretAccessKey };
  const objects = new Map<string, StoredObject>();
  const log: string[] = [];

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const rawUrl = req.url ?? '/';
    const qi = rawUrl.indexOf('?');
    const rawPath = qi < 0 ? rawUrl : rawUrl.slice(0, qi);
    const query: [string, string][] = qi < 0 ? [] : [...new URLSearchParams(rawUrl.slice(qi + 1)).entries()];
    const segs = rawPath.split('/').slice(1);
    const b = decodeURIComponent(segs[0] ?? '');
    const key = segs.slice(1).map(decodeURIComponent).join('/');
    const out: Answer = (status, headers = {}, payload) => {
      log.push(`${req.method} ${key} ${status}`);
      res.writeHead(status, headers);
      res.end(req.method === 'HEAD' ? undefined : payload);
    };
    try {
      verify(keys, req, rawPath, query, body);
      if (b !== bucket) throw new Refusal(404, 'NoSuchBucket', 'The specified bucket does not exist');
      if (!key) throw new Refusal(400, 'InvalidRequest', 'bucket operations are not implemented here');
      objectOp(objects, req, key, body, out, self.ranges);
    } catch (err) {
      const r = err instanceof Refusal ? err : new Refusal(500, 'InternalError', (err as Error).message);
      out(r.status, { 'content-type': 'application/xml' }, errorXml(r.code, r.message, rawPath));
    }
  }

  let server: http.Server | null = null;
  let port = opts.port ?? 0;
  const listen = async () => {
    const s = http.createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve, reject) => s.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
    port = (s.address() as { port: number }).port;
    server = s;
  };
  const stop = async () => {
    const s = server;
    server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();

  const self = {
    get endpoint() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    bucket,
    region,
    accessKeyId,
    secretAccessKey,
    objects,
    log,
    settings(over = {}) {
      return { endpoint: `http://127.0.0.1:${port}`, bucket, region, accessKeyId, secretAccessKey, forcePathStyle: true, timeoutMs: 2000, ...over };
    },
    ranges: true,
    pause: stop,
    resume: listen,
    close: stop,
  };
  return self;
}
