/**
 * A small S3 client (PutObject, GetObject streaming, HeadObject, DeleteObject, presigned GET) over
 * node:http(s), signed with SigV4 (sigv4.ts). Works with any S3-compatible server (AWS, MinIO,
 * Ceph RGW, R2...): path-style (`endpoint/bucket/key`) or virtual-hosted (`bucket.host/key`).
 * Failures are S3Error with the server's error code (SignatureDoesNotMatch, AccessDenied...) or
 * `Unreachable` for transport errors and timeouts, so callers can answer clearly.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { presignQuery, sha256Hex, signHeaders, uriEncode, type Credentials } from './sigv4';
import type { ObjectStore } from './local';
import { rangeHeader, resolveRange, sliceStream, type RangeAsk, type RangedFile } from './range';

export interface S3Settings {
  /** e.g. https://s3.eu-west-1.amazonaws.com or http://127.0.0.1:9000 */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** `endpoint/bucket/key` instead of `bucket.endpoint-host/key` (MinIO and most self-hosted servers). */
  forcePathStyle: boolean;
  /** Per request, until the response headers (default 10 s). */
  timeoutMs?: number;
}

export class S3Error extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus = 0,
  ) {
    super(message);
    this.name = 'S3Error';
  }
}

interface Target {
  url: URL;
  /** The path as signed (encoded once). */
  path: string;
}

function xmlField(body: string, name: string): string {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(body);
  return m ? m[1]! : '';
}

export class S3Client {
  private readonly base: URL;
  private readonly creds: Credentials;

  constructor(readonly settings: S3Settings) {
    this.base = new URL(settings.endpoint);
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:') throw new Error('S3_ENDPOINT: must be an http or https URL');
    this.creds = { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey, region: settings.region };
  }

  private target(key: string): Target {
    const basePath = this.base.pathname.replace(/\/+$/, '');
    const encodedKey = uriEncode(key, true);
    const url = new URL(this.base.toString());
    let path: string;
    if (this.settings.forcePathStyle) {
      path = `${basePath}/${uriEncode(this.settings.bucket)}/${encodedKey}`;
    } else {
      url.hostname = `${this.settings.bucket}.${this.base.hostname}`;
      path = `${basePath}/${encodedKey}`;
    }
    url.pathname = path;
    return { url, path };
  }

  private request(method: string, key: string, opts: { body?: Buffer; headers?: Record<string, string> } = {}): Promise<http.IncomingMessage> {
    const t = this.target(key);
    const body = opts.body ?? Buffer.alloc(0);
    const headers: Record<string, string> = { host: t.url.host, ...(opts.headers ?? {}) };
    const signed = signHeaders(this.creds, { method, path: t.path, headers, payloadHash: sha256Hex(body) }, new Date());
    const all: Record<string, string> = { ...headers, ...signed };
    if (opts.body) all['content-length'] = String(body.length);
    const mod = t.url.protocol === 'https:' ? https : http;
    const timeoutMs = this.settings.timeoutMs ?? 10_000;
    return new Promise((resolve, reject) => {
      const req = mod.request(t.url, { method, headers: all }, resolve);
      req.setTimeout(timeoutMs, () => req.destroy(new S3Error('Unreachable', `object storage did not answer within ${timeoutMs} ms`)));
      req.on('error', (err: Error) =>
        reject(err instanceof S3Error ? err : new S3Error('Unreachable', `object storage unreachable at ${this.base.host}: ${(err as NodeJS.ErrnoException).code ?? err.message}`)),
      );
      req.end(opts.body);
    });
  }

  /** Reads an error response into an S3Error (the body is small XML). */
  private async failure(res: http.IncomingMessage, op: string, key: string): Promise<S3Error> {
    const chunks: Buffer[] = [];
    for await (const c of res) {
      chunks.push(c as Buffer);
      if (chunks.reduce((n, b) => n + b.length, 0) > 64 * 1024) break;
    }
    const text = Buffer.concat(chunks).toString('utf8');
    const status = res.statusCode ?? 0;
    const code = xmlField(text, 'Code') || (status === 404 ? 'NoSuchKey' : status === 403 ? 'AccessDenied' : `HTTP${status}`);
    const message = xmlField(text, 'Message');
    return new S3Error(code, `object storage refused ${op} ${key}: ${code}${message ? ` (${message})` : ''}`, status);
  }

  async put(key: string, body: Buffer, opts: { contentType?: string; metadata?: Record<string, string> } = {}): Promise<void> {
    const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/octet-stream' };
    for (const [k, v] of Object.entries(opts.metadata ?? {})) headers[`x-amz-meta-${k.toLowerCase()}`] = v;
    const res = await this.request('PUT', key, { body, headers });
    if (res.statusCode !== 200) throw await this.failure(res, 'PutObject', key);
    res.resume();
  }

  /**
   * null when the object does not exist. The stream must be consumed or destroyed. With `range` asked, ONE
   * Range GET: 206 gives the bytes and the object's size (Content-Range); 416 says the range is past the
   * end (the size from its Content-Range `bytes *\/size` or the error's ActualObjectSize; a HEAD only when
   * it says neither); a server that answers it whole (200) has the bytes cut here.
   */
  async get(key: string, range?: RangeAsk): Promise<(RangedFile & { metadata: Record<string, string> }) | null> {
    const res = await this.request('GET', key, range ? { headers: { range: rangeHeader(range) } } : {});
    if (res.statusCode === 404) {
      const err = await this.failure(res, 'GetObject', key);
      if (err.code === 'NoSuchKey') return null;
      throw err;
    }
    if (range && res.statusCode === 206) {
      const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(res.headers['content-range'] ?? ''));
      if (!m) {
        res.destroy();
        throw new S3Error('InvalidResponse', `object storage answered GetObject ${key} 206 without a Content-Range of one range`, 206);
      }
      return { size: Number(m[3]), range: { start: Number(m[1]), end: Number(m[2]) }, stream: res, metadata: metadataOf(res) };
    }
    if (range && res.statusCode === 416) return this.unsatisfiable(res, key);
    if (res.statusCode !== 200) throw await this.failure(res, 'GetObject', key);
    const size = Number(res.headers['content-length'] ?? 0);
    if (!range) return { size, stream: res, metadata: metadataOf(res) };
    const r = resolveRange(range, size);
    if (r === 'unsatisfiable') res.destroy();
    return { size, range: r, stream: r === 'unsatisfiable' ? Readable.from([]) : sliceStream(res, r), metadata: metadataOf(res) };
  }

  /** A 416 to a Range GET: the object's size as the answer says it (a HEAD when it does not). */
  private async unsatisfiable(res: http.IncomingMessage, key: string): Promise<(RangedFile & { metadata: Record<string, string> }) | null> {
    const header = /\/(\d+)$/.exec(String(res.headers['content-range'] ?? ''));
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const said = header?.[1] ?? xmlField(Buffer.concat(chunks).toString('utf8'), 'ActualObjectSize');
    const size = said ? Number(said) : (await this.head(key))?.size;
    if (size === undefined) return null;
    return { size, range: 'unsatisfiable', stream: Readable.from([]), metadata: {} };
  }

  /** null when the object does not exist. */
  async head(key: string): Promise<{ size: number; metadata: Record<string, string> } | null> {
    const res = await this.request('HEAD', key);
    res.resume();
    if (res.statusCode === 404) return null;
    if (res.statusCode !== 200)
      throw new S3Error(res.statusCode === 403 ? 'AccessDenied' : `HTTP${res.statusCode}`, `object storage refused HeadObject ${key}: HTTP ${res.statusCode}`, res.statusCode);
    return { size: Number(res.headers['content-length'] ?? 0), metadata: metadataOf(res) };
  }

  /** Idempotent: deleting an absent object succeeds (S3 answers 204 either way). */
  async delete(key: string): Promise<void> {
    const res = await this.request('DELETE', key);
    if (res.statusCode !== 204 && res.statusCode !== 200 && res.statusCode !== 404) throw await this.failure(res, 'DeleteObject', key);
    res.resume();
  }

  /** A GET URL anyone can use until `expiresSec` from now (at most 7 days, S3's limit). */
  presignGet(key: string, expiresSec: number, now = new Date()): string {
    const t = this.target(key);
    const q = presignQuery(this.creds, { method: 'GET', path: t.path, host: t.url.host }, now, Math.min(expiresSec, 604_800));
    return `${t.url.origin}${t.path}?${q}`;
  }
}

function metadataOf(res: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (k.startsWith('x-amz-meta-') && typeof v === 'string') out[k.slice(11)] = v;
  return out;
}

/** storage_files objects in a bucket, under a key prefix (e.g. `storage/`). */
export class S3ObjectStore implements ObjectStore {
  constructor(
    readonly client: S3Client,
    private readonly prefix: string,
  ) {}

  put(key: string, data: Buffer): Promise<void> {
    return this.client.put(this.prefix + key, data);
  }

  get(key: string, range?: RangeAsk): Promise<RangedFile | null> {
    return this.client.get(this.prefix + key, range);
  }

  delete(key: string): Promise<void> {
    return this.client.delete(this.prefix + key);
  }
}
