import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { readWav, readWavInfo, isEngineFormat } from '../../../media-engine/audio/wav';
import { goertzelCoeff, goertzelPower, relativePower } from '../../../media-engine/dsp/goertzel';
import { egressPolicyFor } from '../../../core/net';
import { AudioSourceError, openFrameReader, prepareAudio } from '../../../media-engine/sources';
import { freePort } from '../../../testkit/ports';

/** Fraction of the energy of 160 samples at `start` that sits at `hz`. */
function share(x: Int16Array, start: number, hz: number): number {
  let e = 0;
  for (let i = start; i < start + 160; i++) e += x[i] * x[i];
  return relativePower(goertzelPower(x, start, 160, goertzelCoeff(hz)), 160, e);
}

async function expectCode(p: Promise<unknown>, code: string): Promise<AudioSourceError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(AudioSourceError);
    expect((err as AudioSourceError).code, (err as Error).message).to.equal(code);
    return err as AudioSourceError;
  }
  throw new Error(`expected ${code}, got success`);
}

/** The test's server is on loopback: these fetches opt in to it. */
const loopback = egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });

describe('media-engine/sources prepareAudio and frame reader', function () {
  this.timeout(30000);
  let dir: string;
  let cacheDir: string;
  let server: http.Server;
  let base: string;
  const hits: Record<string, number> = {};
  let notModified = 0;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sources-test-'));
    cacheDir = path.join(dir, 'cache');
    const sox = (args: string[]) => execFileSync('sox', args);
    sox(['-n', '-r', '8000', '-b', '16', '-c', '1', path.join(dir, 'native.wav'), 'synth', '1', 'sine', '440', 'vol', '0.5']);
    sox(['-n', '-r', '44100', '-b', '16', '-c', '2', path.join(dir, 'cd.wav'), 'synth', '1.5', 'sine', '600', 'vol', '0.5']);
    sox(['-n', '-r', '8000', '-c', '1', '-e', 'mu-law', path.join(dir, 'ulaw.wav'), 'synth', '0.5', 'sine', '440', 'vol', '0.5']);
    sox(['-n', '-r', '22050', '-c', '2', path.join(dir, 'tone.mp3'), 'synth', '2', 'sine', '800', 'vol', '0.5']);
    fs.writeFileSync(path.join(dir, 'garbage.wav'), crypto.randomBytes(5000));
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'this is not audio\n'.repeat(100));
    const port = await freePort();
    server = http.createServer((req, res) => {
      const u = req.url ?? '/';
      hits[u] = (hits[u] ?? 0) + 1;
      const serveFile = (name: string, type: string) => {
        const body = fs.readFileSync(path.join(dir, name));
        const etag = `"${crypto.createHash('md5').update(body).digest('hex')}"`;
        if (req.headers['if-none-match'] === etag) {
          notModified++;
          res.writeHead(304, { etag }).end();
          return;
        }
        res.writeHead(200, { 'content-type': type, etag, 'content-length': body.length }).end(body);
      };
      if (u === '/prompt.mp3') return serveFile('tone.mp3', 'audio/mpeg');
      if (u === '/copy-of-prompt') return serveFile('tone.mp3', 'application/octet-stream');
      if (u === '/native.wav') return serveFile('native.wav', 'audio/wav');
      if (u === '/garbage') return serveFile('garbage.wav', 'audio/wav');
      if (u === '/hang') return; // never answers
      if (u === '/chunked-big') {
        res.writeHead(200, { 'content-type': 'audio/wav' });
        const chunk = Buffer.alloc(64 * 1024);
        let n = 0;
        const t = setInterval(() => {
          if (res.destroyed || ++n > 40) {
            clearInterval(t);
            res.end();
          } else res.write(chunk);
        }, 5);
        return;
      }
      res.writeHead(404).end('no such prompt');
    });
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a native 8 kHz 16-bit mono WAV is used as is', async () => {
    const p = await prepareAudio(path.join(dir, 'native.wav'), { cacheDir });
    expect(p).to.include({ path: path.join(dir, 'native.wav'), converted: false, durationMs: 1000 });
  });

  it('converts 44.1 kHz stereo WAV, µ-law WAV and MP3 to 8 kHz 16-bit mono, keeping the content', async () => {
    for (const [name, hz, ms] of [
      ['cd.wav', 600, 1500],
      ['ulaw.wav', 440, 500],
      ['tone.mp3', 800, 2000],
    ] as const) {
      const p = await prepareAudio(path.join(dir, name), { cacheDir });
      expect(p.converted).to.equal(true);
      expect(isEngineFormat(readWavInfo(p.path).format), name).to.equal(true);
      expect(p.durationMs, name).to.be.within(ms - 30, ms + 80); // mp3 decoders add a little padding
      const { samples } = readWav(p.path);
      expect(share(samples, 2000, hz), name).to.be.greaterThan(0.9);
      // second time: cached conversion, same path, no new file
      const again = await prepareAudio(path.join(dir, name), { cacheDir });
      expect(again.path).to.equal(p.path);
    }
  });

  it('bad local input gives clear errors', async () => {
    await expectCode(prepareAudio(path.join(dir, 'missing.wav'), { cacheDir }), 'NOT_FOUND');
    await expectCode(prepareAudio(path.join(dir, 'notes.txt'), { cacheDir }), 'UNSUPPORTED_FORMAT');
    const e = await expectCode(prepareAudio(path.join(dir, 'garbage.wav'), { cacheDir }), 'CONVERSION_FAILED');
    expect(e.message).to.match(/sox could not convert/);
  });

  it('fetches an http URL into the cache, then serves it from cache, then revalidates with ETag (304)', async () => {
    const url = `${base}/prompt.mp3`;
    const first = await prepareAudio(url, { egress: loopback, cacheDir });
    expect(first.from).to.equal('network');
    expect(first.converted).to.equal(true);
    expect(readWavInfo(first.path).durationMs).to.be.within(1990, 2080);
    const second = await prepareAudio(url, { egress: loopback, cacheDir });
    expect(second).to.include({ from: 'cache', path: first.path });
    expect(hits['/prompt.mp3']).to.equal(1);
    const third = await prepareAudio(url, { egress: loopback, cacheDir, maxAgeMs: 0 });
    expect(third).to.include({ from: 'revalidated', path: first.path });
    expect(hits['/prompt.mp3']).to.equal(2);
    expect(notModified).to.equal(1);
    // Content-addressed: another URL with the same bytes shares the conversion.
    const copy = await prepareAudio(`${base}/copy-of-prompt`, { egress: loopback, cacheDir });
    expect(copy.path).to.equal(first.path);
  });

  it('concurrent requests for one URL make one download', async () => {
    const url = `${base}/native.wav`;
    const results = await Promise.all([1, 2, 3].map(() => prepareAudio(url, { egress: loopback, cacheDir })));
    expect(new Set(results.map((r) => r.path)).size).to.equal(1);
    expect(hits['/native.wav']).to.equal(1);
    expect(results[0].converted).to.equal(false);
  });

  it('bad URLs give clear errors: 404, not audio, too large, timeout, refused, bad scheme', async () => {
    const e = await expectCode(prepareAudio(`${base}/nope.wav`, { egress: loopback, cacheDir }), 'HTTP_STATUS');
    expect(e.message).to.match(/404/);
    await expectCode(prepareAudio(`${base}/garbage`, { egress: loopback, cacheDir }), 'CONVERSION_FAILED');
    await expectCode(prepareAudio(`${base}/prompt.mp3?big`, { egress: loopback, cacheDir, maxBytes: 1000 }), 'HTTP_STATUS');
    await expectCode(prepareAudio(`${base}/native.wav`, { egress: loopback, cacheDir: path.join(dir, 'c2'), maxBytes: 1000 }), 'TOO_LARGE');
    await expectCode(prepareAudio(`${base}/chunked-big`, { egress: loopback, cacheDir, maxBytes: 200_000 }), 'TOO_LARGE');
    // the egress policy tells no answer, a refused port and a reset apart by nothing (no port-scan oracle)
    await expectCode(prepareAudio(`${base}/hang`, { egress: loopback, cacheDir, timeoutMs: 300 }), 'FETCH_FAILED');
    const closed = await freePort();
    await expectCode(prepareAudio(`http://127.0.0.1:${closed}/x.wav`, { egress: loopback, cacheDir }), 'FETCH_FAILED');
    await expectCode(prepareAudio('ftp://127.0.0.1/x.wav', { egress: loopback, cacheDir }), 'BAD_URL');
    expect(fs.readdirSync(cacheDir).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
  });

  it('without an egress policy that allows it, a loopback URL is refused before any request', async () => {
    const before = hits['/native.wav'] ?? 0;
    const e = await expectCode(prepareAudio(`${base}/native.wav`, { cacheDir: path.join(dir, 'c3') }), 'REFUSED');
    expect(e.message).to.match(/loopback/);
    expect(hits['/native.wav'] ?? 0).to.equal(before);
  });

  it('the frame reader yields 160-sample frames, pads the last, loops and rewinds', async () => {
    const p = await prepareAudio(path.join(dir, 'cd.wav'), { cacheDir });
    const all = readWav(p.path).samples;
    const r = openFrameReader(p.path);
    const f = new Int16Array(160);
    const got: number[] = [];
    while (r.readFrame(f)) got.push(...f);
    expect(got.length).to.equal(Math.ceil(all.length / 160) * 160);
    expect(got.slice(0, all.length)).to.deep.equal(Array.from(all));
    expect(got.slice(all.length).every((v) => v === 0)).to.equal(true);
    r.rewind();
    expect(r.readFrame(f)).to.equal(true);
    expect(Array.from(f)).to.deep.equal(Array.from(all.subarray(0, 160)));
    r.close();
    expect(r.readFrame(f)).to.equal(false);

    const late = openFrameReader(p.path, { startMs: 1000 });
    expect(late.readFrame(f)).to.equal(true);
    expect(Array.from(f)).to.deep.equal(Array.from(all.subarray(8000, 8160)));
    late.close();

    const loop = openFrameReader(path.join(dir, 'native.wav'), { loop: true });
    let frames = 0;
    while (frames < 200 && loop.readFrame(f)) frames++;
    expect(frames).to.equal(200); // 4 s from a 1 s file
    loop.close();
    expect(() => openFrameReader(path.join(dir, 'cd.wav'))).to.throw(/prepareAudio/);
  });
});
