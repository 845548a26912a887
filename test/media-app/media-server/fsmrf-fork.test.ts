// Audio taps on the fsmrf backend (media-app/media-server/fsmrf/fork-tap.ts) against our switch
// (test/esl/rig.ts, all real on loopback): the switch's mod_audio_fork connects to media-app's fork
// server with the fork's token, the far end's tone arrives as 20 ms 8 kHz frames in order at the
// call's pace, injected audio reaches the far end, a dropped connection ends the fork with its reason,
// and a connection with a token no fork waits for is refused before the upgrade.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import WebSocket from 'ws';
import { FORK_SUBPROTOCOL, ForkTapError, ForkTapServer } from '../../../media-app/media-server/fsmrf/fork-tap';
import { EgressPolicy, egressSettingsFromEnv } from '../../../core/net';
import { readWav } from '../../../testkit/media-engine/support';
import { toneShare } from '../../../testkit/media-engine/far-end';
import { useFsmrfSuite } from './fsmrf-suite';

describe('media-app fsmrf backend: audio taps over mod_audio_fork', function () {
  this.timeout(30_000);
  // the switch dials media-app's fork server on loopback: its egress policy allows it (the operator's allowlist)
  const suite = useFsmrfSuite({
    rig: { egress: new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' })), forkConnectTimeoutMs: 2000 },
    connect: { taps: { host: '127.0.0.1', port: 0, connectTimeoutMs: 3000 } },
  });
  let twoTones: string;
  before(() => {
    // one second of 440 Hz, then one of 1000 Hz: the order the frames must keep
    twoTones = path.join(suite.dir, 'two-tones.wav');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', twoTones, 'synth', '1', 'sine', '440', ':', 'synth', '1', 'sine', '1000']);
  });

  /** Resolves once `n` frames came; fails after `ms`. */
  function until(frames: { at: number }[], n: number, ms = 8000): Promise<void> {
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const t = setInterval(() => {
        if (frames.length >= n) {
          clearInterval(t);
          resolve();
        } else if (Date.now() - started > ms) {
          clearInterval(t);
          reject(new Error(`${frames.length} frames of ${n} within ${ms} ms`));
        }
      }, 20);
    });
  }

  it("the far end's tone arrives as 8 kHz 20 ms frames, in order, once each, at the call's pace", async () => {
    const { leg, peer } = await suite.call();
    const frames: { at: number; f: Int16Array }[] = [];
    const fork = await leg.forkAudioStart({ mix: 'in', onFrame: (f) => void frames.push({ at: Date.now(), f }) });
    expect(fork.rate).to.equal(8000);
    const played = peer.play(twoTones);
    await played;
    await until(frames, 1);
    const stats = await leg.forkAudioStop(fork);
    expect(frames.every(({ f }) => f.length === 160)).to.equal(true);
    expect(stats?.sent, 'each frame delivered once').to.equal(frames.length);
    const share = (hz: number) => frames.map(({ f }) => toneShare(f, hz, 8000));
    const low = share(440)
      .map((s, i) => (s > 0.5 ? i : -1))
      .filter((i) => i >= 0);
    const high = share(1000)
      .map((s, i) => (s > 0.5 ? i : -1))
      .filter((i) => i >= 0);
    expect(low.length, '440 Hz frames').to.be.above(35);
    expect(high.length, '1000 Hz frames').to.be.above(35);
    expect(Math.max(...low), 'every 440 Hz frame before every 1000 Hz one').to.be.below(Math.min(...high));
    // two seconds of the tones took about two seconds to arrive: the call's pace, not a burst
    const span = frames[high.at(-1)!]!.at - frames[low[0]!]!.at;
    expect(span).to.be.within(1500, 3500);
  });

  it('injected audio reaches the far end; stop ends the fork and its connection', async () => {
    const { leg, peer } = await suite.call();
    const fork = await leg.forkAudioStart({ mix: 'both', onFrame: () => undefined });
    const heard = path.join(suite.dir, 'injected.wav');
    const rec = await peer.startRecord(heard);
    const tone = new Int16Array(8000);
    for (let i = 0; i < tone.length; i++) tone[i] = Math.round(8000 * Math.sin((2 * Math.PI * 600 * i) / 8000));
    fork.inject(tone);
    await new Promise((r) => setTimeout(r, 1500)); // a second of audio plays out in real time
    await peer.stopRecord(heard);
    await rec.done;
    expect(toneShare(readWav(heard).samples, 600, 8000), 'the far end hears the injected tone').to.be.above(0.3);
    expect(await fork.stop()).to.deep.include({ injected: 50 });
    expect(await fork.ended).to.equal('stopped');
    expect(await fork.stop(), 'a second stop').to.equal(null);
  });

  it('a consumer that holds its frames: at most maxInFlight in flight, the rest dropped and counted; released, frames flow again', async () => {
    const { leg, peer } = await suite.call();
    const held: (() => void)[] = [];
    let calls = 0;
    const fork = await leg.forkAudioStart({ mix: 'in', maxInFlight: 3, onFrame: () => (calls++, new Promise<void>((r) => held.push(r))) });
    void peer.play(twoTones).catch(() => undefined);
    const frames: { at: number }[] = [];
    // 20 frames' worth of time seen by a probe fork beside it: the held one took 3 and dropped the rest
    const probe = await leg.forkAudioStart({ mix: 'in', onFrame: () => void frames.push({ at: Date.now() }) });
    await until(frames, 20);
    expect(calls, 'no more than maxInFlight handed out while none settled').to.equal(3);
    for (const r of held.splice(0)) r();
    const before = calls;
    frames.length = 0;
    await until(frames, 10);
    expect(calls, 'frames flow again once the held ones settled').to.be.above(before);
    const stats = await fork.stop();
    expect(stats!.dropped, 'the frames past maxInFlight counted').to.be.above(10);
    expect(stats!.sent).to.equal(calls);
    await probe.stop();
  });

  it('a dropped connection ends the fork with its reason; the leg forks again after', async () => {
    const { leg, peer } = await suite.call();
    const fork = await leg.forkAudioStart({ mix: 'in', onFrame: () => undefined });
    const wss = (suite.backend.taps as unknown as { wss: { clients: Set<WebSocket> } }).wss; // the server's sockets, dropped as a reset would
    for (const ws of wss.clients) ws.terminate();
    expect(await fork.ended).to.match(/^the switch's audio fork connection closed \(code 1006\)$/);
    expect(await fork.stop()).to.equal(null);
    const frames: { at: number }[] = [];
    const again = await leg.forkAudioStart({ mix: 'in', onFrame: () => void frames.push({ at: Date.now() }) });
    void peer.play(twoTones).catch(() => undefined);
    await until(frames, 10);
    await again.stop();
  });

  it("AMD and the beep on the leg's fork: a beep found, a beep wait timing out (ETIMEDOUT), a dropped fork failing AMD (EPIPE), no fork left after", async () => {
    const { leg, peer } = await suite.call();
    const beepWav = path.join(suite.dir, 'beep.wav');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', beepWav, 'synth', '0.3', 'sine', '0', ':', 'synth', '0.6', 'sine', '1000', 'vol', '0.4']);
    const waiting = leg.waitForBeep({ timeoutMs: 5000 });
    await peer.play(beepWav);
    const beep = await waiting;
    expect(beep.frequency).to.be.within(950, 1050);
    const taps = (suite.backend.taps as unknown as { wss: { clients: Set<WebSocket> } }).wss;
    /** until the fork server holds `n` connections (the detections' forks) */
    const connections = (n: number) =>
      new Promise<void>((resolve) => {
        const t = setInterval(() => {
          if (taps.clients.size !== n) return;
          clearInterval(t);
          resolve();
        }, 20);
      });
    await connections(0); // the beep found, its fork stopped
    const timedOut = await leg.waitForBeep({ timeoutMs: 300 }).then(
      () => null,
      (e: { code?: string }) => e.code,
    );
    expect(timedOut).to.equal('ETIMEDOUT');
    // the caller says nothing for long: AMD runs until its connection drops
    const verdict = leg.amd({ initialSilence: 20_000, totalAnalysisTime: 30_000 }).then(
      () => null,
      (e: { code?: string; message: string }) => e,
    );
    await connections(1);
    for (const ws of taps.clients) ws.terminate();
    const err = await verdict;
    expect(err?.code).to.equal('EPIPE');
    expect(err?.message).to.match(/^the audio fork ended: the switch's audio fork connection closed/);
    await connections(0);
  });

  it('a server closed while it starts to listen does not listen: the port it was starting on is not left bound', async () => {
    const taps = new ForkTapServer({ host: '127.0.0.1', port: 0, connectTimeoutMs: 1000 });
    const starting = taps.port();
    await taps.close();
    const err = await starting.then(
      (port) => new Error(`listening on ${port} after close()`),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ForkTapError);
    expect((err as Error).message).to.equal('the audio fork server is closed');
  });

  it('a connection whose token no fork waits for is refused before the upgrade (403)', async () => {
    const port = await suite.backend.taps.port();
    for (const p of ['/fork/AAAAAAAAAAAAAAAAAAAAAAAA', '/fork/', '/']) {
      const status = await new Promise<number | string>((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}${p}`, FORK_SUBPROTOCOL);
        ws.on('error', () => undefined);
        ws.once('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          ws.terminate();
        });
        ws.once('open', () => {
          resolve('open');
          ws.close();
        });
      });
      expect(status, p).to.equal(403);
    }
  });
});
