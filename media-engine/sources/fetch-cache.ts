/**
 * http(s) audio fetched into a content-addressed cache (layout, validation and bound: cache-index.ts):
 *   <cacheDir>/blob-<sha256 of content>.<type>      the bytes, shared by every URL serving them
 *   <cacheDir>/url-<sha256 of url>.json             ETag / Last-Modified / which blob, when checked and used
 * A URL checked less than `maxAgeMs` ago is served from disk without a request; after that it is
 * revalidated with If-None-Match / If-Modified-Since, so an unchanged file costs one 304. A response's
 * own Cache-Control shortens that (RFC 9111 §5.2.2): `max-age=N` below maxAgeMs is its time, `no-cache`
 * none (revalidated at each use). A `no-store` body is never indexed: it is a file of that use only
 * (`nostore-<pid>-…`), removed when the result is released.
 * Every request (and each redirect) goes through the egress policy (core/net, a leaf module the
 * worker may import): the host is resolved and checked and the socket pinned to the checked address.
 * A use served from disk is checked too, as the request would be (the URL, and where its redirects
 * led; the host resolved): a policy tightened since the copy was fetched refuses it as it would refuse
 * the request. A result holds its blob (not evicted) until released; a use holds it from the moment its
 * entry is read (before the policy's check or the revalidation is awaited), and writes its use stamp
 * then, so that another thread's trim sees it in use (cache-trim.ts: the grace).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { EgressFailed, EgressRefused, egressPolicyFor, type EgressPolicy, type EgressStream } from '../../core/net';
import { AudioSourceError } from './errors';
import { blobName, lease, readEntry, useStamp, writeEntry, type CacheBounds, type UrlEntry } from './cache-index';
import { noteDownload } from './cache-trim';
import { sniffAudioType } from './sox';

export interface FetchOptions extends CacheBounds {
  cacheDir: string;
  /** Largest download accepted, bytes. Default 50 MB. */
  maxBytes?: number;
  /** Whole request (headers and body) time limit, ms. Default 15000. */
  timeoutMs?: number;
  /** Serve a checked URL without revalidation for this long, ms. Default 300000. */
  maxAgeMs?: number;
  /** Who may be fetched. Default: the policy of an empty environment (public addresses only). */
  egress?: EgressPolicy;
}

const STRICT: NodeJS.ProcessEnv = {};
const MAX_REDIRECTS = 5;

export interface FetchResult {
  path: string;
  sha256: string;
  /** 'network' = downloaded now, 'revalidated' = 304, 'cache' = no request made. */
  from: 'network' | 'revalidated' | 'cache';
  /** The use is over: the blob may be evicted again; a no-store body's file is removed. Idempotent. */
  release(): void;
  /** A no-store body: a file of this use only (removed when released), not in the cache. */
  transient?: boolean;
}

const sha = (s: string | Buffer) => crypto.createHash('sha256').update(s).digest('hex');

const TYPE_BY_MIME: Record<string, string> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/vnd.wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/ogg': 'ogg',
  'audio/flac': 'flac',
  'audio/basic': 'au',
};

function typeOf(url: URL, contentType: string | undefined, head: Buffer): string {
  const sniffed = sniffAudioType(head);
  if (sniffed) return sniffed;
  const mime = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (TYPE_BY_MIME[mime]) return TYPE_BY_MIME[mime];
  const ext = path.extname(url.pathname).slice(1).toLowerCase();
  return /^[a-z0-9]{1,5}$/.test(ext) ? ext : 'bin';
}

/** Download (or reuse) the audio at `url`; resolves to the cached blob's path, held until released. */
export async function fetchToCache(rawUrl: string, opts: FetchOptions): Promise<FetchResult> {
  const url = fetchableUrl(rawUrl);
  const policy = opts.egress ?? egressPolicyFor(STRICT);
  fs.mkdirSync(opts.cacheDir, { recursive: true, mode: 0o700 });
  const indexPath = path.join(opts.cacheDir, `url-${sha(url.href)}.json`);
  const entry = readEntry(opts.cacheDir, indexPath);
  // held from here: no trim removes the blob while the policy's check or the revalidation is awaited
  const hold = entry ? lease(opts.cacheDir, entry.blob) : undefined;
  const tmp = path.join(opts.cacheDir, `dl-${process.pid}-${crypto.randomBytes(6).toString('hex')}.tmp`);
  try {
    const now = Date.now();
    if (entry) {
      entry.usedAt = useStamp(now);
      writeEntry(indexPath, entry);
    }
    if (entry && now - entry.checkedAt < Math.min(opts.maxAgeMs ?? 300_000, entry.freshMs ?? Infinity)) {
      // no request: the policy is asked all the same (it may have been tightened since the copy was fetched)
      await checkPolicy(policy, url, entry.finalUrl, rawUrl);
      if (present(opts.cacheDir, entry)) return held(opts.cacheDir, entry, 'cache');
      // removed meanwhile (another process's trim, past its grace): fetched again
      return await request(url, rawUrl, { opts, policy, indexPath, entry: null, tmp, now });
    }
    return await request(url, rawUrl, { opts, policy, indexPath, entry, tmp, now });
  } finally {
    // each result took its own lease (synchronously, while this one held the blob)
    hold?.();
    fs.rmSync(tmp, { force: true });
  }
}

const present = (cacheDir: string, entry: UrlEntry) => fs.existsSync(path.join(cacheDir, entry.blob));

/** The result for `entry`'s blob, held (not evicted) until released. */
function held(cacheDir: string, entry: UrlEntry, from: FetchResult['from']): FetchResult {
  return { path: path.join(cacheDir, entry.blob), sha256: entry.sha256, from, release: lease(cacheDir, entry.blob) };
}

/** What a hit is asked as the fetch would be (core/net policy.open): the URL, and where its redirects led. */
async function checkPolicy(policy: EgressPolicy, url: URL, finalUrl: string | undefined, rawUrl: string): Promise<void> {
  try {
    await policy.checkDestination(policy.assertUrlSyntax(url).hostname);
  } catch (err) {
    throw fetchError(err, rawUrl);
  }
  if (!finalUrl || finalUrl === url.href) return;
  try {
    await policy.checkDestination(policy.assertUrlSyntax(finalUrl, 'a redirect').hostname);
  } catch (err) {
    if (err instanceof EgressRefused) throw fetchError(new EgressRefused('redirect', `a redirect led somewhere not allowed: ${err.message}`), rawUrl);
    throw fetchError(err, rawUrl);
  }
}

interface Request {
  opts: FetchOptions;
  policy: EgressPolicy;
  indexPath: string;
  entry: UrlEntry | null;
  tmp: string;
  now: number;
}

/** The request (conditional when there is an entry), its 304 or its body stored (or kept apart: no-store). */
async function request(url: URL, rawUrl: string, r: Request): Promise<FetchResult> {
  const { opts, entry, now } = r;
  const headers: Record<string, string> = {};
  if (entry?.etag) headers['if-none-match'] = entry.etag;
  if (entry?.lastModified) headers['if-modified-since'] = entry.lastModified;
  let res: EgressStream;
  try {
    res = await r.policy.open(url, { headers, timeoutMs: opts.timeoutMs ?? 15000, maxBytes: opts.maxBytes ?? 50 * 1024 * 1024, maxRedirects: MAX_REDIRECTS });
  } catch (err) {
    throw fetchError(err, rawUrl);
  }
  if (res.status === 304 && entry) {
    res.close();
    entry.checkedAt = now;
    entry.usedAt = useStamp(now);
    entry.freshMs = freshnessMs(res.headers['cache-control']) ?? entry.freshMs;
    writeEntry(r.indexPath, entry);
    if (present(opts.cacheDir, entry)) return held(opts.cacheDir, entry, 'revalidated');
    // removed meanwhile (another process's trim, past its grace): fetched again, unconditionally
    return request(url, rawUrl, { ...r, entry: null });
  }
  if (res.status < 200 || res.status > 299) {
    res.close();
    throw new AudioSourceError('HTTP_STATUS', `GET ${url.href} answered ${res.status}`, rawUrl);
  }
  const body = await download(res, r.tmp, rawUrl);
  if (body.size === 0) throw new AudioSourceError('UNSUPPORTED_FORMAT', `${url.href} returned an empty body`, rawUrl);
  const ctype: string | string[] | undefined = res.headers['content-type'];
  const type = typeOf(url, typeof ctype === 'string' ? ctype : ctype?.[0], body.head);
  if (noStore(res.headers['cache-control'])) return keptApart(r, type, body.digest);
  const blob = blobName(body.digest, type);
  const blobPath = path.join(opts.cacheDir, blob);
  if (fs.existsSync(blobPath)) {
    fs.rmSync(r.tmp);
    // written now as far as another thread's trim can tell (the grace: an entry naming it follows)
    const t = new Date();
    fs.utimesSync(blobPath, t, t);
  } else fs.renameSync(r.tmp, blobPath);
  const next: UrlEntry = {
    url: url.href,
    blob,
    sha256: body.digest,
    size: body.size,
    checkedAt: now,
    usedAt: useStamp(now),
    etag: res.headers.etag ?? undefined,
    lastModified: res.headers['last-modified'] ?? undefined,
    freshMs: freshnessMs(res.headers['cache-control']),
    finalUrl: res.url && res.url !== url.href ? res.url : undefined,
  };
  writeEntry(r.indexPath, next);
  const result = held(opts.cacheDir, next, 'network');
  // the bound is kept in the background (cache-trim.ts), never on this thread's ticks
  noteDownload(opts.cacheDir, opts, body.size);
  return result;
}

/**
 * A `no-store` body (RFC 9111 §5.2.2.5): a file of this use only, removed when released; never indexed
 * (an earlier entry of the URL goes: its blob, named by none, is evicted).
 */
function keptApart(r: Request, type: string, digest: string): FetchResult {
  const file = path.join(r.opts.cacheDir, `nostore-${process.pid}-${crypto.randomBytes(6).toString('hex')}.${type}`);
  fs.renameSync(r.tmp, file);
  fs.rmSync(r.indexPath, { force: true });
  let done = false;
  const release = () => {
    if (done) return;
    done = true;
    fs.rmSync(file, { force: true });
  };
  return { path: file, sha256: digest, from: 'network', transient: true, release };
}

function noStore(cacheControl: string | string[] | undefined): boolean {
  const v = Array.isArray(cacheControl) ? cacheControl.join(',') : (cacheControl ?? '');
  return v
    .toLowerCase()
    .split(',')
    .some((d) => d.trim() === 'no-store');
}

/**
 * The freshness a response gives itself in its Cache-Control (RFC 9111 §5.2.2): 0 for `no-store` or
 * `no-cache`, N s for `max-age=N`; undefined when it says neither.
 */
export function freshnessMs(cacheControl: string | string[] | undefined): number | undefined {
  const v = Array.isArray(cacheControl) ? cacheControl.join(',') : cacheControl;
  if (!v) return undefined;
  const dirs = v
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (dirs.some((d) => d === 'no-store' || d === 'no-cache' || d.startsWith('no-cache='))) return 0;
  for (const d of dirs) {
    const m = /^max-age\s*=\s*"?(\d+)"?$/.exec(d);
    if (m) return Number(m[1]) * 1000;
  }
  return undefined;
}

/** The URL, if it is one this cache fetches (http or https). */
function fetchableUrl(rawUrl: string): URL {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new AudioSourceError('BAD_URL', `not a valid URL: ${rawUrl}`, rawUrl);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AudioSourceError('BAD_URL', `only http and https URLs can be fetched: ${rawUrl}`, rawUrl);
  }
  return url;
}

/** Streams the body into `tmp`, hashing it; keeps its first bytes to sniff the type. Closes the response. */
async function download(res: EgressStream, tmp: string, rawUrl: string): Promise<{ size: number; head: Buffer; digest: string }> {
  const hash = crypto.createHash('sha256');
  const fd = fs.openSync(tmp, 'w');
  let size = 0;
  let head = Buffer.alloc(0);
  try {
    for await (const b of res.body) {
      size += b.length;
      if (head.length < 16) head = Buffer.concat([head, b.subarray(0, 16)]);
      hash.update(b);
      fs.writeSync(fd, b);
    }
  } catch (err) {
    throw fetchError(err, rawUrl);
  } finally {
    fs.closeSync(fd);
    res.close();
  }
  return { size, head, digest: hash.digest('hex') };
}

/** The policy's refusal or failure as an AudioSourceError (messages never carry the remote answer). */
function fetchError(err: unknown, rawUrl: string): AudioSourceError {
  if (err instanceof AudioSourceError) return err;
  if (err instanceof EgressRefused) return new AudioSourceError('REFUSED', err.message, rawUrl);
  if (err instanceof EgressFailed) {
    if (err.reason === 'too-large') return new AudioSourceError('TOO_LARGE', err.message, rawUrl);
    return new AudioSourceError('FETCH_FAILED', err.message, rawUrl);
  }
  return new AudioSourceError('FETCH_FAILED', (err as Error).message, rawUrl);
}
