// media-engine's fetch cache (media-engine/sources/fetch-cache.ts, cache-index.ts) against a real HTTP
// server on loopback that counts what it is asked: the egress policy is asked at every use, a cache hit
// too (a copy fetched before the policy was tightened is not served); an index entry whose blob is not
// a name the cache writes is absent (and removed); a `no-store` body is a temporary file of this use
// only, never indexed; the cache is bounded (entries, bytes), least recently used first, in-use kept.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { wavFile } from '../../../core/audio/wav';
import { egressPolicyFor } from '../../../core/net';
import { AudioSourceError, fetchToCache, prepareAudio, type FetchOptions } from '../../../media-engine/sources';

const tone = (hz: number, n = 800) =>
  wavFile(
    Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000))),
    8000,
  );

const loopback = egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });

describe('media-engine fetch cache: policy at each use, blob names, no-store, bounds', () => {
  const served = new Map<string, { body: Buffer; cacheControl?: string }>();
  const asked: string[] = [];
  const server = http.createServer((req, res) => {
    const s = served.get(req.url ?? '');
    asked.push(req.url ?? '');
    if (!s) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'audio/wav', etag: '"e"', ...(s.cacheControl ? { 'cache-control': s.cacheControl } : {}) }).end(s.body);
  });
  server.on('error', () => undefined);
  let root = '';
  let cacheDir = '';
  let base = '';
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'fetch-cache-'));
    cacheDir = path.join(root, 'cache');
    served.clear();
    asked.length = 0;
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const get = (p: string, o: Partial<FetchOptions> = {}) => fetchToCache(base + p, { cacheDir, egress: loopback, ...o });
  const indexFiles = () => fs.readdirSync(cacheDir).filter((f) => f.startsWith('url-'));
  const blobs = () => fs.readdirSync(cacheDir).filter((f) => f.startsWith('blob-'));
  async function refused(p: Promise<unknown>): Promise<AudioSourceError> {
    const e = await p.then(
      () => null,
      (err: unknown) => err,
    );
    expect(e, 'refused').to.be.instanceOf(AudioSourceError);
    expect((e as AudioSourceError).code, (e as Error).message).to.equal('REFUSED');
    return e as AudioSourceError;
  }

  it('a cache hit asks the egress policy: refused once the policy no longer allows the host, as a fetch is', async () => {
    served.set('/a.wav', { body: tone(440) });
    expect((await get('/a.wav')).from).to.equal('network');
    expect((await get('/a.wav')).from, 'still allowed: a hit').to.equal('cache');
    const tightened = egressPolicyFor({});
    const hit = await refused(get('/a.wav', { egress: tightened }));
    const fresh = await refused(fetchToCache(`${base}/never-fetched.wav`, { cacheDir: path.join(root, 'other'), egress: tightened }));
    expect(hit.message).to.equal(fresh.message);
    expect(asked, 'one request in all').to.deep.equal(['/a.wav']);
  });

  it('an entry whose blob is not a name the cache writes is absent and removed (no path outside the cache)', async () => {
    served.set('/a.wav', { body: tone(440) });
    await get('/a.wav');
    const [index] = indexFiles();
    const planted = path.join(root, 'planted.wav');
    fs.writeFileSync(planted, tone(900));
    for (const blob of [path.relative(cacheDir, planted), '../planted.wav', `blob-${'0'.repeat(64)}.wav`, 'blob-abc.wav']) {
      const entry = JSON.parse(fs.readFileSync(path.join(cacheDir, index), 'utf8')) as { blob: string };
      fs.writeFileSync(path.join(cacheDir, index), JSON.stringify({ ...entry, blob }));
      if (blob.startsWith('blob-')) fs.writeFileSync(path.join(cacheDir, blob), tone(900));
      const r = await get('/a.wav');
      expect(r.from, blob).to.equal('network');
      expect(path.dirname(r.path)).to.equal(cacheDir);
      expect(fs.readFileSync(r.path)).to.deep.equal(tone(440));
    }
    expect(asked.length).to.equal(5);
  });

  it('a no-store body is used for this play only: a temporary file, removed when released, never indexed', async () => {
    served.set('/ns.wav', { body: tone(440), cacheControl: 'no-store' });
    const a = await get('/ns.wav');
    expect(fs.readFileSync(a.path)).to.deep.equal(tone(440));
    expect(indexFiles(), 'not indexed').to.deep.equal([]);
    expect(blobs(), 'no blob').to.deep.equal([]);
    const b = await get('/ns.wav');
    expect(b.path, 'a file of its own').to.not.equal(a.path);
    a.release();
    expect(fs.existsSync(a.path), 'removed when released').to.equal(false);
    expect(fs.existsSync(b.path)).to.equal(true);
    b.release();
    expect(fs.readdirSync(cacheDir)).to.deep.equal([]);
    expect(asked).to.deep.equal(['/ns.wav', '/ns.wav']);
  });

  it('prepareAudio of a no-store URL: nothing kept once released', async () => {
    served.set('/ns.wav', { body: tone(440), cacheControl: 'private, no-store' });
    const p = await prepareAudio(`${base}/ns.wav`, { cacheDir, egress: loopback });
    expect(fs.existsSync(p.path)).to.equal(true);
    p.release();
    expect(fs.readdirSync(cacheDir)).to.deep.equal([]);
  });

  it('bounded by entries: the least recently used goes first; one in use is kept until released', async () => {
    for (const n of ['a', 'b', 'c', 'd']) served.set(`/${n}.wav`, { body: tone(300 + n.charCodeAt(0)) });
    const o = { maxCacheEntries: 2 };
    (await get('/a.wav', o)).release();
    (await get('/b.wav', o)).release();
    (await get('/a.wav', o)).release(); // a used last: b is the least recently used
    (await get('/c.wav', o)).release();
    const kept = await get('/a.wav', o);
    expect(kept.from, 'a kept').to.equal('cache');
    kept.release();
    const held = await get('/c.wav', o); // c held (in use) while d comes
    expect(held.from).to.equal('cache');
    (await get('/d.wav', o)).release();
    expect(indexFiles().length, 'a went, c in use stayed').to.equal(2);
    const again = await get('/c.wav', o);
    expect(again.from).to.equal('cache');
    again.release();
    held.release();
    expect((await get('/b.wav', o)).from, 'b was evicted').to.equal('network');
    expect(blobs().length).to.equal(indexFiles().length);
  });

  it("a crashed process's temporary files go at the next eviction; a running one's stay", async () => {
    served.set('/a.wav', { body: tone(440) });
    fs.mkdirSync(cacheDir, { recursive: true });
    const child = spawn(process.execPath, ['-e', '0']);
    const dead = await new Promise<number>((r) => child.on('exit', () => r(child.pid!)));
    const left = [`dl-${dead}-0123456789ab.tmp`, `nostore-${dead}-0123456789ab.wav`, `nostore-${dead}-0123456789ab.wav.conv.wav`];
    const live = [`dl-${process.pid}-0123456789ab.tmp`, `nostore-${process.pid}-0123456789ab.wav`];
    for (const f of [...left, ...live]) fs.writeFileSync(path.join(cacheDir, f), 'x');
    (await get('/a.wav')).release();
    const names = fs.readdirSync(cacheDir);
    for (const f of left) expect(names, f).to.not.include(f);
    for (const f of live) expect(names, f).to.include(f);
  });

  it('bounded by bytes: blobs past the total are evicted, least recently used first', async () => {
    for (const n of ['a', 'b', 'c']) served.set(`/${n}.wav`, { body: tone(300 + n.charCodeAt(0), 4000) });
    const size = tone(300, 4000).length;
    const o = { maxCacheBytes: size * 2 + 10 };
    for (const n of ['a', 'b', 'c']) (await get(`/${n}.wav`, o)).release();
    expect(blobs().length).to.equal(2);
    const c = await get('/c.wav', o);
    expect(c.from).to.equal('cache');
    c.release();
    const a = await get('/a.wav', o);
    expect(a.from, 'a, the oldest, went').to.equal('network');
    a.release();
  });
});
