/**
 * http(s) audio fetched into a content-addressed cache:
 *   <cacheDir>/blob-<sha256 of content>.<type>      the bytes, shared by every URL serving them
 *   <cacheDir>/url-<sha256 of url>.json             ETag / Last-Modified / which blob, when checked
 * A URL checked less than `maxAgeMs` ago is served from disk without a request; after that it is
 * revalidated with If-None-Match / If-Modified-Since, so an unchanged file costs one 304.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AudioSourceError } from './errors';
import { sniffAudioType } from './sox';

export interface FetchOptions {
  cacheDir: string;
  /** Largest download accepted, bytes. Default 50 MB. */
  maxBytes?: number;
  /** Whole request (headers and body) time limit, ms. Default 15000. */
  timeoutMs?: number;
  /** Serve a checked URL without revalidation for this long, ms. Default 300000. */
  maxAgeMs?: number;
}

interface UrlEntry {
  url: string;
  blob: string; // file name inside cacheDir
  sha256: string;
  size: number;
  etag?: string;
  lastModified?: string;
  checkedAt: number;
}

export interface FetchResult {
  path: string;
  sha256: string;
  /** 'network' = downloaded now, 'revalidated' = 304, 'cache' = no request made. */
  from: 'network' | 'revalidated' | 'cache';
}

const sha = (s: string | Buffer) => crypto.createHash('sha256').update(s).digest('hex');

const TYPE_BY_MIME: Record<string, string> = {
  'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav', 'audio/vnd.wave': 'wav',
  'audio/mpeg': 'mp3', 'audio/mp3': 'mp3', 'audio/ogg': 'ogg', 'audio/flac': 'flac', 'audio/basic': 'au',
};

function typeOf(url: URL, contentType: string | null, head: Buffer): string {
  const sniffed = sniffAudioType(head);
  if (sniffed) return sniffed;
  const mime = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (TYPE_BY_MIME[mime]) return TYPE_BY_MIME[mime];
  const ext = path.extname(url.pathname).slice(1).toLowerCase();
  return /^[a-z0-9]{1,5}$/.test(ext) ? ext : 'bin';
}

/** Download (or reuse) the audio at `url`; resolves to the cached blob's path. */
export async function fetchToCache(rawUrl: string, opts: FetchOptions): Promise<FetchResult> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new AudioSourceError('BAD_URL', `not a valid URL: ${rawUrl}`, rawUrl);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AudioSourceError('BAD_URL', `only http and https URLs can be fetched: ${rawUrl}`, rawUrl);
  }
  fs.mkdirSync(opts.cacheDir, { recursive: true });
  const indexPath = path.join(opts.cacheDir, `url-${sha(url.href)}.json`);
  let entry: UrlEntry | null = null;
  try {
    entry = JSON.parse(fs.readFileSync(indexPath, 'utf8')) as UrlEntry;
    if (!fs.existsSync(path.join(opts.cacheDir, entry.blob))) entry = null;
  } catch {
    entry = null;
  }
  const now = Date.now();
  if (entry && now - entry.checkedAt < (opts.maxAgeMs ?? 300_000)) {
    return { path: path.join(opts.cacheDir, entry.blob), sha256: entry.sha256, from: 'cache' };
  }

  const maxBytes = opts.maxBytes ?? 50 * 1024 * 1024;
  const timeoutMs = opts.timeoutMs ?? 15000;
  const headers: Record<string, string> = {};
  if (entry?.etag) headers['if-none-match'] = entry.etag;
  if (entry?.lastModified) headers['if-modified-since'] = entry.lastModified;
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const tmp = path.join(opts.cacheDir, `dl-${process.pid}-${crypto.randomBytes(6).toString('hex')}.tmp`);
  try {
    let res: Response;
    try {
      res = await fetch(url, { headers, signal: ac.signal, redirect: 'follow' });
    } catch (err) {
      if (ac.signal.aborted) throw new AudioSourceError('TIMEOUT', `no answer from ${url.href} within ${timeoutMs} ms`, rawUrl);
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new AudioSourceError('FETCH_FAILED', `cannot fetch ${url.href}: ${cause?.code ?? cause?.message ?? (err as Error).message}`, rawUrl);
    }
    if (res.status === 304 && entry) {
      await res.body?.cancel();
      entry.checkedAt = now;
      fs.writeFileSync(indexPath, JSON.stringify(entry));
      return { path: path.join(opts.cacheDir, entry.blob), sha256: entry.sha256, from: 'revalidated' };
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new AudioSourceError('HTTP_STATUS', `GET ${url.href} answered ${res.status} ${res.statusText}`, rawUrl);
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (declared > maxBytes) {
      await res.body?.cancel();
      throw new AudioSourceError('TOO_LARGE', `${url.href} is ${declared} bytes, over the ${maxBytes} byte limit`, rawUrl);
    }
    const hash = crypto.createHash('sha256');
    const fd = fs.openSync(tmp, 'w');
    let size = 0;
    let head = Buffer.alloc(0);
    try {
      for await (const chunk of res.body ?? []) {
        const b = Buffer.from(chunk as Uint8Array);
        size += b.length;
        if (size > maxBytes) {
          ac.abort();
          throw new AudioSourceError('TOO_LARGE', `${url.href} is over the ${maxBytes} byte limit`, rawUrl);
        }
        if (head.length < 16) head = Buffer.concat([head, b.subarray(0, 16)]);
        hash.update(b);
        fs.writeSync(fd, b);
      }
    } catch (err) {
      if (err instanceof AudioSourceError) throw err;
      if (ac.signal.aborted) throw new AudioSourceError('TIMEOUT', `download of ${url.href} took longer than ${timeoutMs} ms`, rawUrl);
      throw new AudioSourceError('FETCH_FAILED', `download of ${url.href} failed: ${(err as Error).message}`, rawUrl);
    } finally {
      fs.closeSync(fd);
    }
    if (size === 0) throw new AudioSourceError('UNSUPPORTED_FORMAT', `${url.href} returned an empty body`, rawUrl);
    const digest = hash.digest('hex');
    const blob = `blob-${digest}.${typeOf(url, res.headers.get('content-type'), head)}`;
    const blobPath = path.join(opts.cacheDir, blob);
    if (fs.existsSync(blobPath)) fs.rmSync(tmp);
    else fs.renameSync(tmp, blobPath);
    const next: UrlEntry = {
      url: url.href, blob, sha256: digest, size, checkedAt: now,
      etag: res.headers.get('etag') ?? undefined,
      lastModified: res.headers.get('last-modified') ?? undefined,
    };
    fs.writeFileSync(indexPath, JSON.stringify(next));
    return { path: blobPath, sha256: digest, from: 'network' };
  } finally {
    clearTimeout(timer);
    fs.rmSync(tmp, { force: true });
  }
}
