// media-engine's fetch cache (media-engine/sources/fetch-cache.ts, cache-index.ts) against a real HTTP
// server on loopback that counts what it is asked: the egress policy is asked at every use, a cache hit
// too (a copy fetched before the policy was tightened is not served); an index entry whose blob is not
// a name the cache writes is absent (and removed); a `no-store` body is a temporary file of this use
// only, never indexed; the cache is bounded (entries, bytes), least recently used first, in-use kept: held
// from the read of its entry (a trim while the policy or a 304 is awaited leaves it), what another thread
// used within the grace kept, the trim in the background (a few files per turn of the event loop).
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { wavFile } from '../../../core/audio/wav';
import { EgressPolicy, egressPolicyFor, type CheckedAddress } from '../../../core/net';
import { useServedFiles } from '../../../testkit/served-files';
import { AudioSourceError, cacheTrimmed, evict, fetchToCache, prepareAudio, trimsStarted, type FetchOptions } from '../../../media-engine/sources';

const tone = (hz: number, n = 800) =>
  wavFile(
    Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000))),
    8000,
  );

const loopback = egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });

/** The loopback policy, whose check of a destination waits for `gate` (a use stays in it while the test trims). */
class GatedPolicy extends EgressPolicy {
  constructor(private readonly gate: Promise<void>) {
    super(loopback.settings);
  }
  override async checkDestination(host: string): Promise<CheckedAddress> {
    await this.gate;
    return super.checkDestination(host);
  }
}

const sha = (s: string | Buffer) => crypto.createHash('sha256').update(s).digest('hex');
/** A trim that would remove every entry and blob not kept (held, or used elsewhere within the grace). */
const ALL = { maxCacheEntries: 0 };

/** `code` run in a thread of its own (tsx loaded; `w` its data with `sources`, `parentPort`); resolves to its first message. */
function inThread<T>(code: string, data: Record<string, unknown>): Promise<T> {
  const sources = path.resolve(__dirname, '../../../media-engine/sources');
  const worker = new Worker(`require('tsx/cjs'); const { parentPort, workerData: w } = require('node:worker_threads'); ${code}`, { eval: true, workerData: { ...data, sources } });
  return new Promise<T>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (c) => reject(new Error(`the thread exited (${c}) without an answer`)));
    worker.once('message', (m: T) => resolve(m));
  });
}

/** Another thread of this process (as a media worker is) that fetches `url` into `cacheDir` and holds it until told. */
function otherThread(url: string, cacheDir: string): { got: Promise<string>; release(): Promise<void> } {
  const code = `require('tsx/cjs');
    const { parentPort, workerData: w } = require('node:worker_threads');
    const { fetchToCache } = require(w.sources);
    const { egressPolicyFor } = require(w.net);
    fetchToCache(w.url, { cacheDir: w.cacheDir, egress: egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }) }).then(
      (r) => { parentPort.postMessage(r.path); parentPort.once('message', () => { r.release(); parentPort.close(); }); },
      (e) => { parentPort.postMessage('failed: ' + e.message); parentPort.close(); });`;
  const root = path.resolve(__dirname, '../../..');
  const worker = new Worker(code, { eval: true, workerData: { url, cacheDir, sources: path.join(root, 'media-engine/sources'), net: path.join(root, 'core/net') } });
  const exited = new Promise<void>((r) => worker.once('exit', () => r()));
  const got = new Promise<string>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (m: string) => (m.startsWith('failed: ') ? reject(new Error(m)) : resolve(m)));
  });
  return {
    got,
    release: async () => {
      worker.postMessage('release');
      await exited;
    },
  };
}

describe('media-engine fetch cache: policy at each use, blob names, no-store, bounds', () => {
  const files = useServedFiles('fetch-cache-');
  const { served } = files;
  let root = '';
  let cacheDir = '';
  let base = '';
  beforeEach(() => {
    ({ root, base } = files);
    cacheDir = path.join(root, 'cache');
  });
  /** the paths asked, in order */
  const asked = () => files.asked.map((a) => a.path);

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
    expect(asked(), 'one request in all').to.deep.equal(['/a.wav']);
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
    expect(asked().length).to.equal(5);
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
    expect(asked()).to.deep.equal(['/ns.wav', '/ns.wav']);
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
    await cacheTrimmed(cacheDir);
    expect(indexFiles().length, 'a went, c in use stayed').to.equal(2);
    const again = await get('/c.wav', o);
    expect(again.from).to.equal('cache');
    again.release();
    held.release();
    expect((await get('/b.wav', o)).from, 'b was evicted').to.equal('network');
    await cacheTrimmed(cacheDir);
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
    await cacheTrimmed(cacheDir);
    const names = fs.readdirSync(cacheDir);
    for (const f of left) expect(names, f).to.not.include(f);
    for (const f of live) expect(names, f).to.include(f);
  });

  it('bounded by bytes: blobs past the total are evicted, least recently used first', async () => {
    for (const n of ['a', 'b', 'c']) served.set(`/${n}.wav`, { body: tone(300 + n.charCodeAt(0), 4000) });
    const size = tone(300, 4000).length;
    const o = { maxCacheBytes: size * 2 + 10 };
    for (const n of ['a', 'b', 'c']) (await get(`/${n}.wav`, o)).release();
    await cacheTrimmed(cacheDir);
    expect(blobs().length).to.equal(2);
    const c = await get('/c.wav', o);
    expect(c.from).to.equal('cache');
    c.release();
    const a = await get('/a.wav', o);
    expect(a.from, 'a, the oldest, went').to.equal('network');
    a.release();
  });

  it('a hit is held from the read of its entry: a trim while the policy is asked leaves its blob', async () => {
    served.set('/a.wav', { body: tone(440) });
    (await get('/a.wav')).release();
    await cacheTrimmed(cacheDir);
    let open = () => {};
    const hit = get('/a.wav', { egress: new GatedPolicy(new Promise<void>((r) => (open = r))) });
    await evict(cacheDir, { ...ALL, evictGraceMs: 0 }); // as another download's trim, while the policy is asked
    open();
    const r = await hit;
    expect(r.from).to.equal('cache');
    expect(fs.readFileSync(r.path), 'the blob is still there').to.deep.equal(tone(440));
    r.release();
    await evict(cacheDir, { ...ALL, evictGraceMs: 0 });
    expect(indexFiles(), 'released: the same trim removes it').to.deep.equal([]);
  });

  it('a revalidation is held from the read of its entry: a trim before its 304 leaves its blob', async () => {
    served.set('/a.wav', { body: tone(440), etag: '"e"' });
    (await get('/a.wav')).release();
    await cacheTrimmed(cacheDir);
    let answer = () => {};
    served.set('/a.wav', { body: tone(440), etag: '"e"', answerAfter: new Promise<void>((r) => (answer = r)) });
    const again = get('/a.wav', { maxAgeMs: 0 });
    await evict(cacheDir, { ...ALL, evictGraceMs: 0 }); // the request is out, its answer held back
    answer();
    const r = await again;
    expect(r.from).to.equal('revalidated');
    expect(fs.readFileSync(r.path), 'the blob is still there').to.deep.equal(tone(440));
    r.release();
    expect(asked()).to.deep.equal(['/a.wav', '/a.wav']);
  });

  it("what another thread holds is kept by the grace (leases are per thread); this thread's released entry goes", async function () {
    this.timeout(30_000);
    served.set('/a.wav', { body: tone(440) });
    served.set('/b.wav', { body: tone(500) });
    (await get('/a.wav')).release();
    await cacheTrimmed(cacheDir);
    const other = otherThread(`${base}/b.wav`, cacheDir);
    try {
      const b = await other.got;
      await evict(cacheDir, ALL);
      expect(fs.readFileSync(b), "the other thread's blob").to.deep.equal(tone(500));
      expect(indexFiles(), "a (this thread's, released) went, b stayed").to.have.lengthOf(1);
      expect(blobs()).to.deep.equal([path.basename(b)]);
      // without the grace it goes, held there or not: this thread cannot see another's lease
      await evict(cacheDir, { ...ALL, evictGraceMs: 0 });
      expect(indexFiles()).to.deep.equal([]);
    } finally {
      await other.release();
    }
  });

  it('a blob or conversion no entry names: kept while recent (another thread downloading or converting), removed past the grace', async () => {
    fs.mkdirSync(cacheDir, { recursive: true });
    const [fresh, old] = [`blob-${sha('fresh')}.wav`, `blob-${sha('old')}.wav`];
    const [freshConv, oldConv] = [`conv-${sha('conv fresh')}.wav`, `convw-${sha('conv old')}.wav`];
    for (const f of [fresh, old, freshConv, oldConv]) fs.writeFileSync(path.join(cacheDir, f), 'x');
    const past = new Date(Date.now() - 121_000); // the default grace is 120 s
    for (const f of [old, oldConv]) fs.utimesSync(path.join(cacheDir, f), past, past);
    await evict(cacheDir, {});
    expect(fs.readdirSync(cacheDir).sort()).to.deep.equal([fresh, freshConv].sort());
  });

  it('two downloads in a row start one trim, not two; one that may pass the bounds starts the next', async () => {
    for (const n of ['a', 'b', 'c']) served.set(`/${n}.wav`, { body: tone(300 + n.charCodeAt(0)) });
    (await get('/a.wav')).release();
    (await get('/b.wav')).release();
    await cacheTrimmed(cacheDir);
    expect(trimsStarted(cacheDir), 'a and b').to.equal(1);
    (await get('/c.wav', { maxCacheEntries: 2 })).release();
    await cacheTrimmed(cacheDir);
    expect(trimsStarted(cacheDir), 'c passes the bound of 2').to.equal(2);
    expect(indexFiles()).to.have.lengthOf(2);
  });

  it('a trim of 2000 entries runs in the background: between two turns of the event loop it touches a few files, not all', async function () {
    this.timeout(60_000);
    fs.mkdirSync(cacheDir, { recursive: true });
    const long = Date.now() - 3_600_000;
    for (let i = 0; i < 2000; i++) {
      const body = Buffer.from(`entry ${i}`);
      const blob = `blob-${sha(body)}.wav`;
      fs.writeFileSync(path.join(cacheDir, blob), body);
      const url = `${base}/e${i}.wav`;
      fs.writeFileSync(path.join(cacheDir, `url-${sha(url)}.json`), JSON.stringify({ url, blob, sha256: sha(body), size: body.length, checkedAt: long + i, usedAt: long + i }));
    }
    // in a thread of its own, as a media worker: every file operation counted (fs and fs.promises), and the
    // most of them between two turns of the event loop (setImmediate), for the index files read at once as
    // the trim once did, then for the trim. Counted, not timed: a stall's length on a loaded machine is the
    // scheduler's, the work done in one turn is the code's.
    const m = await inThread<{ most: number; atOnce: number; entries?: number }>(
      `const fs = require('node:fs');
      const path = require('node:path');
      let ops = 0, most = 0, done = false;
      for (const k of ['readFile', 'stat', 'rm', 'readdir', 'unlink']) { const f = fs.promises[k]; fs.promises[k] = (...a) => { ops++; return f.apply(fs.promises, a); }; }
      for (const k of ['readFileSync', 'statSync', 'rmSync', 'existsSync', 'readdirSync', 'unlinkSync']) { const f = fs[k]; fs[k] = (...a) => { ops++; return f.apply(fs, a); }; }
      const { evict } = require(w.sources);
      for (const f of fs.readdirSync(w.cacheDir)) if (f.startsWith('url-')) fs.existsSync(path.join(w.cacheDir, JSON.parse(fs.readFileSync(path.join(w.cacheDir, f), 'utf8')).blob));
      const atOnce = ops;
      ops = 0;
      const turn = () => { most = Math.max(most, ops); ops = 0; if (!done) setImmediate(turn); };
      setImmediate(turn);
      Promise.resolve(evict(w.cacheDir, { maxCacheEntries: 1000 })).then((left) => setImmediate(() => { done = true; parentPort.postMessage({ most, atOnce, entries: left && left.entries }); parentPort.close(); }));`,
      { cacheDir },
    );
    expect(m.atOnce, 'the baseline: every index and its blob in one turn').to.be.at.least(4000);
    expect(m.most, `at most ${m.most} file operations in one turn; ${m.atOnce} read at once`).to.be.below(m.atOnce / 20);
    expect(m.entries).to.equal(1000);
    expect(indexFiles()).to.have.lengthOf(1000);
    expect(blobs()).to.have.lengthOf(1000);
  });
});
