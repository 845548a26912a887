// The TTS cache is bounded (media-engine/tts/cache-trim.ts): every distinct text (a name, a code read
// out) used to leave a file for ever, so a platform that stays up filled its disk. Real espeak-ng, a
// temporary directory; the trim runs in the background and is awaited (ttsCacheTrimmed).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTtsProvider, evictTts, ttsCacheTrimmed, ttsTrimsStarted, type TtsCacheBounds } from '../../../media-engine/tts';
import type { MediaServer } from '../../../media-engine';
import { pcmuOffer, useMediaServer } from '../../../testkit/media-engine/support';
import { until } from '../../../testkit/poll';
import dgram from 'node:dgram';
import { loadMediaAppConfig } from '../../../media-app/kit/config';

describe('media-engine/tts: the cache is bounded', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tts-bound-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const prompts = () => fs.readdirSync(dir).filter((n) => /^tts-[0-9a-f]{64}\.wav$/.test(n));
  const provider = (bounds: TtsCacheBounds) => createTtsProvider('espeak-ng', { cacheDir: dir, bounds });

  it('past its count the least recently used prompts go; a hit is a use', async () => {
    const tts = provider({ maxEntries: 3, evictGraceMs: 0 });
    const a = await tts.synthesize('alpha');
    const b = await tts.synthesize('bravo');
    await tts.synthesize('charlie');
    expect((await tts.synthesize('alpha')).cached, 'alpha served again').to.equal(true);
    await tts.synthesize('delta');
    await ttsCacheTrimmed(dir);
    expect(prompts()).to.have.lengthOf(3);
    expect(fs.existsSync(b.path), 'bravo, the least recently used, removed').to.equal(false);
    expect(fs.existsSync(a.path), 'alpha, used after bravo, kept').to.equal(true);
    // a prompt trimmed away is made again, not served from nothing
    const again = await tts.synthesize('bravo');
    expect(again).to.include({ path: b.path, cached: false });
    expect(fs.statSync(again.path).size).to.be.greaterThan(1000);
  });

  it('past its bytes the oldest go until the rest fit', async () => {
    const tts = provider({ maxBytes: 1, evictGraceMs: 0 });
    for (const t of ['one', 'two', 'three']) await tts.synthesize(t);
    await ttsCacheTrimmed(dir);
    expect(prompts(), 'nothing fits in a byte').to.have.lengthOf(0);
    const left = await evictTts(dir, { maxBytes: 1, evictGraceMs: 0 });
    expect(left).to.deep.equal({ entries: 0, bytes: 0 });
  });

  it('a prompt served or written within the grace stays, whatever the bound (its player may not have opened it yet)', async () => {
    const tts = provider({ maxEntries: 1, evictGraceMs: 60_000 });
    for (const t of ['first', 'second', 'third']) await tts.synthesize(t);
    await ttsCacheTrimmed(dir);
    expect(prompts()).to.have.lengthOf(3);
    // the same files, their last use an hour ago: the trim takes them down to the bound
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const n of prompts()) fs.utimesSync(path.join(dir, n), hourAgo, hourAgo);
    expect(await evictTts(dir, { maxEntries: 1, evictGraceMs: 60_000 })).to.include({ entries: 1 });
    expect(prompts()).to.have.lengthOf(1);
  });

  it('a trim that could not reach the bound (all within the grace) is not run again at every write', async () => {
    const tts = provider({ maxEntries: 1, evictGraceMs: 60_000 });
    for (const t of ['one', 'two']) {
      await tts.synthesize(t);
      await ttsCacheTrimmed(dir);
    }
    expect(ttsTrimsStarted(dir), 'the first write, then the bound passed').to.equal(2);
    for (const t of ['three', 'four', 'five']) {
      await tts.synthesize(t);
      await ttsCacheTrimmed(dir);
    }
    expect(ttsTrimsStarted(dir), 'none until a minute has passed: the same files would stay').to.equal(2);
    expect(prompts()).to.have.lengthOf(5);
  });

  it("a synthesis's temporary file is removed once its process is gone, not before", async () => {
    const name = `tts-${'a'.repeat(64)}.wav`;
    const dead = path.join(dir, `${name}.999999.0123abcd.tmp`);
    const mine = path.join(dir, `${name}.${process.pid}.0123abcd.tmp`);
    const other = path.join(dir, 'notes.txt');
    for (const f of [dead, mine, other]) fs.writeFileSync(f, 'x');
    await evictTts(dir, {});
    expect([fs.existsSync(dead), fs.existsSync(mine), fs.existsSync(other)]).to.deep.equal([false, true, true]);
  });
});

describe("media-engine: the engine's speech cache keeps MediaServerOptions.ttsCache's bound in its workers", function () {
  this.timeout(60_000);
  let ms: MediaServer;
  let dir: string;
  useMediaServer({ ports: 10, workers: 1, cache: true, server: { ttsCache: { maxEntries: 2, evictGraceMs: 0 } } }, (f) => ({ ms, dir } = f));

  it('four texts said, two prompts left', async () => {
    const far = dgram.createSocket('udp4');
    far.on('error', () => undefined);
    await new Promise<void>((r) => far.bind(0, '127.0.0.1', r));
    const ep = await ms.createEndpoint({ remoteSdp: pcmuOffer(far.address().port) });
    try {
      for (const t of ['one', 'two', 'three', 'four']) await ep.say(t, { language: 'en-US' });
      const ttsDir = path.join(dir, 'cache', 'tts');
      const left = () => fs.readdirSync(ttsDir).filter((n) => /^tts-[0-9a-f]{64}\.wav$/.test(n)).length;
      await until(() => left() === 2, 10_000, 'the worker trimmed its cache to 2');
    } finally {
      await ep.destroy();
      far.close();
    }
  });
});

describe('media-app: TTS_CACHE_MAX_MB and TTS_CACHE_MAX_ENTRIES bound the speech caches', () => {
  it('read in bytes and prompts, 1024 MB and 10000 by default; 0 refused by name', () => {
    expect(loadMediaAppConfig({ TTS_CACHE_MAX_MB: '5', TTS_CACHE_MAX_ENTRIES: '7' }).ttsCache).to.deep.equal({ maxBytes: 5 * 1024 * 1024, maxEntries: 7 });
    expect(loadMediaAppConfig({}).ttsCache).to.deep.equal({ maxBytes: 1024 * 1024 * 1024, maxEntries: 10_000 });
    expect(() => loadMediaAppConfig({ TTS_CACHE_MAX_MB: '0' })).to.throw(/TTS_CACHE_MAX_MB/);
    expect(() => loadMediaAppConfig({ TTS_CACHE_MAX_ENTRIES: 'many' })).to.throw(/TTS_CACHE_MAX_ENTRIES/);
  });
});
