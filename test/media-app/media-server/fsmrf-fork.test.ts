// Audio taps on the fsmrf backend (media-app/media-server/fsmrf/fork-tap.ts) against our switch
// (testkit/esl/switch-rig.ts, all real on loopback): the switch's mod_audio_fork connects to media-app's fork
// server with the fork's token, the far end's tone arrives as 20 ms 8 kHz frames in order at the
// call's pace (16 kHz ones for a legRate fork of a G.722 leg), injected audio reaches the far end, a dropped connection ends the fork with its reason,
// and a connection with a token no fork waits for is refused before the upgrade.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { once } from 'node:events';
import WebSocket, { type WebSocketServer } from 'ws';
import { FORK_SUBPROTOCOL, ForkTapError, ForkTapServer } from '../../../media-app/media-server/fsmrf/fork-tap';
import { EgressPolicy, egressSettingsFromEnv } from '../../../core/net';
import { toneShare } from '../../../testkit/media-engine/far-end';
import { MediaBackendUnsupported } from '../../../media-app/media-server/port';
import type { SpeechEvent } from '../../../media-engine';
import { boundedOnce } from '../../../testkit/bounded';
import { useFsmrfSuite } from '../../../testkit/esl/fsmrf-suite';
import { upgradeStatus } from './fork-upgrade';

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

  /**
   * Frames as they come (`onFrame`), and `until(n)`: resolves when the n-th arrives, fails after `ms`
   * (its timer the wait's own, cleared either way).
   */
  function collector(keep: (f: Int16Array) => boolean = () => true) {
    const frames: { at: number; f: Int16Array }[] = [];
    let wait: { n: number; done: () => void } | null = null;
    return {
      frames,
      onFrame: (f: Int16Array) => {
        if (!keep(f)) return;
        frames.push({ at: Date.now(), f });
        if (wait && frames.length >= wait.n) wait.done();
      },
      until(n: number, ms = 8000): Promise<void> {
        if (frames.length >= n) return Promise.resolve();
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => {
            wait = null;
            reject(new Error(`${frames.length} frames of ${n} within ${ms} ms`));
          }, ms);
          wait = {
            n,
            done: () => {
              clearTimeout(timer);
              wait = null;
              resolve();
            },
          };
        });
      },
    };
  }

  /** The fork server's connections as it tells them (its 'connection' and 'closed' events). */
  const taps = () => suite.backend.taps;
  /** Resolves once every fork connection the server holds has closed (each wait bounded, naming what is open). */
  const allClosed = async () => {
    while (taps().connections > 0) await boundedOnce(taps(), 'closed', 10_000, `${taps().connections} fork connections to close`);
  };
  /** The server's side of the next fork connection, with its upgrade request (bounded). */
  const nextConnection = () => boundedOnce(taps(), 'connection', 10_000, 'a fork connection') as Promise<[WebSocket, { url: string }]>;

  it("the far end's tone arrives as 8 kHz 20 ms frames, in order, once each, at the call's pace", async () => {
    const { leg, peer } = await suite.call();
    const c = collector();
    const frames = c.frames;
    const fork = await leg.forkAudioStart({ mix: 'in', onFrame: c.onFrame });
    expect(fork.rate).to.equal(8000);
    const played = peer.play(twoTones);
    await played;
    await c.until(1);
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
    // the call's pace, not a burst. The last frame cannot come before it was played, 2 s after the first
    // one: the span shrinks only by how late the first one was read (a stall of this process), so 1 s
    // below the audio's length is a stall this tolerates; later reads only lengthen it (the wide upper
    // bound). A burst comes in a few reads of the socket: paced frames come over many turns.
    const span = frames[high.at(-1)!]!.at - frames[low[0]!]!.at;
    expect(span, 'from the first 440 Hz frame to the last 1000 Hz one (ms)').to.be.within(1000, 10_000);
    const turns = new Set(frames.map(({ at }) => at)).size;
    expect(turns, 'the distinct moments (ms) the frames came at').to.be.above(20);
  });

  /** `seconds` of a sine at `hz`, sampled at `rate`. */
  function sine(hz: number, rate: number, seconds: number): Int16Array {
    const out = new Int16Array(rate * seconds);
    for (let i = 0; i < out.length; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate));
    return out;
  }

  it('a legRate fork of a G.722 leg is 16 kHz both ways: 320-sample frames carrying a 6 kHz tone (no 8 kHz path carries it), 16 kHz audio injected heard at 7 kHz, 8 kHz audio injected heard too', async () => {
    const { leg, peer } = await suite.call({ codecs: ['G722'] });
    const wav = path.join(suite.dir, 'six-k.wav');
    execFileSync('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', wav, 'synth', '2', 'sine', '6000', 'vol', '0.5']);
    const c = collector((f) => toneShare(f, 6000, 16000) > 0.5);
    const all: Int16Array[] = [];
    const fork = await leg.forkAudioStart({ mix: 'in', legRate: true, onFrame: (f) => (all.push(f), c.onFrame(f)) });
    expect(fork.rate).to.equal(16000);
    void peer.play(wav).catch(() => undefined);
    await c.until(40);
    expect(
      all.every((f) => f.length === 320),
      'every frame 20 ms at 16 kHz',
    ).to.equal(true);
    // what the far end hears of the fork's injections, at its own 16 kHz
    const high = collector((f) => toneShare(f, 7000, 16000) > 0.5);
    const low = collector((f) => toneShare(f, 600, 16000) > 0.5);
    const ear = await peer.forkAudioStart({ mix: 'in', legRate: true, onFrame: (f) => (high.onFrame(f), low.onFrame(f)) });
    expect(ear.rate).to.equal(16000);
    fork.inject(sine(7000, 16000, 1), 16000);
    await high.until(40, 5000);
    fork.inject(sine(600, 8000, 1)); // the default rate, 8 kHz: brought up to the fork's 16 kHz
    await low.until(40, 5000);
    await peer.forkAudioStop(ear);
    expect(await fork.stop()).to.deep.include({ injected: 100 });
  });

  it("a legRate fork of a G.711 leg is 8 kHz (the leg's own rate, as the engine gives); without legRate a G.722 leg forks at 8 kHz", async () => {
    const narrow = await suite.call({ codecs: ['PCMU'] });
    const a = await narrow.leg.forkAudioStart({ mix: 'in', legRate: true, onFrame: () => undefined });
    expect(a.rate).to.equal(8000);
    expect(() => a.inject(new Int16Array(320), 16000), 'an 8 kHz fork streams back at 8 kHz').to.throw(MediaBackendUnsupported, /injecting 16 kHz audio into an 8 kHz fork/);
    await a.stop();
    const wide = await suite.call({ codecs: ['G722'] });
    const c = collector();
    const b = await wide.leg.forkAudioStart({ mix: 'both', onFrame: c.onFrame });
    expect(b.rate).to.equal(8000);
    await c.until(5);
    expect(c.frames.every(({ f }) => f.length === 160)).to.equal(true);
    await b.stop();
  });

  it('injected audio reaches the far end; stop ends the fork and its connection', async () => {
    const { leg, peer } = await suite.call();
    const fork = await leg.forkAudioStart({ mix: 'both', onFrame: () => undefined });
    // what the far end receives, 600 Hz frames only: a second of the injected tone is 50 of them
    const heard = collector((f) => toneShare(f, 600, 8000) > 0.5);
    const ear = await peer.forkAudioStart({ mix: 'in', onFrame: heard.onFrame });
    const tone = new Int16Array(8000);
    for (let i = 0; i < tone.length; i++) tone[i] = Math.round(8000 * Math.sin((2 * Math.PI * 600 * i) / 8000));
    fork.inject(tone);
    await heard.until(40, 5000); // the far end hears the injected tone (as it plays out, in real time)
    await peer.forkAudioStop(ear);
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
    const c = collector();
    // 20 frames' worth of time seen by a probe fork beside it: the held one took 3 and dropped the rest
    const probe = await leg.forkAudioStart({ mix: 'in', onFrame: c.onFrame });
    await c.until(20);
    expect(calls, 'no more than maxInFlight handed out while none settled').to.equal(3);
    for (const r of held.splice(0)) r();
    const before = calls;
    await c.until(c.frames.length + 10);
    expect(calls, 'frames flow again once the held ones settled').to.be.above(before);
    const stats = await fork.stop();
    expect(stats!.dropped, 'the frames past maxInFlight counted').to.be.above(10);
    expect(stats!.sent).to.equal(calls);
    await probe.stop();
  });

  it('a dropped connection ends the fork with its reason; the leg forks again after', async () => {
    const { leg, peer } = await suite.call();
    const connected = nextConnection();
    const fork = await leg.forkAudioStart({ mix: 'in', onFrame: () => undefined });
    (await connected)[0].terminate(); // the server's socket, dropped as a reset would
    expect(await fork.ended).to.match(/^the switch's audio fork connection closed \(code 1006\)$/);
    expect(await fork.stop()).to.equal(null);
    const c = collector();
    const again = await leg.forkAudioStart({ mix: 'in', onFrame: c.onFrame });
    void peer.play(twoTones).catch(() => undefined);
    await c.until(10);
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
    await allClosed(); // the beep found, its fork stopped
    const timedOut = await leg.waitForBeep({ timeoutMs: 300 }).then(
      () => null,
      (e: { code?: string }) => e.code,
    );
    expect(timedOut).to.equal('ETIMEDOUT');
    // the caller says nothing for long: AMD runs until its connection drops
    const connected = nextConnection();
    const verdict = leg.amd({ initialSilence: 20_000, totalAnalysisTime: 30_000 }).then(
      () => null,
      (e: { code?: string; message: string }) => e,
    );
    const [amdSocket] = await connected;
    expect(taps().connections, "AMD's fork").to.equal(1);
    amdSocket.terminate();
    const err = await verdict;
    expect(err?.code).to.equal('EPIPE');
    expect(err?.message).to.match(/^the audio fork ended: the switch's audio fork connection closed/);
    await allClosed();
    expect(taps().connections).to.equal(0);
  });

  it("the VAD tap on the leg's fork: the caller's words start a turn and their end stops it ('speech'), a second tap EBUSY, vadStop ends the fork; a dropped fork ends a turn, a new fork goes on", async () => {
    const { leg, peer } = await suite.call();
    const raw = path.join(suite.dir, 'words-raw.wav');
    const words = path.join(suite.dir, 'words.wav');
    execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '-w', raw, 'What are your opening hours?']);
    execFileSync('sox', [raw, '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', words]);
    const events: SpeechEvent[] = [];
    leg.on('speech', (e) => events.push(e));
    const connected = nextConnection();
    await leg.vadStart({ mode: 2, startMs: 200, stopMs: 600 });
    await connected;
    expect(taps().connections, "the tap's fork").to.equal(1);
    const busy = await leg.vadStart({}).then(
      () => null,
      (e: { code?: string }) => e.code,
    );
    expect(busy).to.equal('EBUSY');
    const turnStarted = boundedOnce(leg, 'speech', 10_000, 'the turn to start');
    await peer.play(words);
    await turnStarted;
    if (events.at(-1)?.state !== 'stop') await boundedOnce(leg, 'speech', 10_000, 'the turn to stop');
    expect(events.map((e) => e.state)).to.deep.equal(['start', 'stop']);
    // the words last about 1.6 s; the turn ends 600 ms after them
    expect(events[1]!.offsetMs - events[0]!.offsetMs, 'the turn (ms)').to.be.within(1000, 4000);
    await leg.vadStop();
    await allClosed();
    expect(taps().connections).to.equal(0);
    // a turn in progress when the fork's connection drops ends with its 'stop'
    events.length = 0;
    const again = nextConnection();
    await leg.vadStart({ mode: 2, startMs: 200, stopMs: 600 });
    const [socket] = await again;
    const started = boundedOnce(leg, 'speech', 10_000, 'the second turn to start');
    void peer.play(words).catch(() => undefined);
    await started;
    const stopped = boundedOnce(leg, 'speech', 10_000, "the turn's stop at the drop");
    const replaced = nextConnection();
    socket.terminate();
    await stopped;
    expect(events.map((e) => e.state)).to.deep.equal(['start', 'stop']);
    // the tap goes on: a new fork of the leg feeds it (the dropped one had fed it), the caller's next words a turn
    await replaced;
    const third = boundedOnce(leg, 'speech', 10_000, 'a turn on the new fork');
    await peer.play(words);
    await third;
    expect(events.map((e) => e.state).slice(0, 3)).to.deep.equal(['start', 'stop', 'start']);
    await leg.vadStop();
    await allClosed();
    expect(taps().connections).to.equal(0);
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
      const status = await upgradeStatus(port, p);
      expect(status, p).to.equal(403);
    }
  });

  it("a token used twice, while its fork's connection is open and after it ended: refused (403), the first connection untouched", async () => {
    const { leg, peer } = await suite.call();
    const port = await suite.backend.taps.port();
    const switchConnected = nextConnection();
    const c = collector();
    const fork = await leg.forkAudioStart({ mix: 'in', onFrame: c.onFrame });
    const [first, req] = await switchConnected;
    expect(await upgradeStatus(port, req.url), 'the same token again').to.equal(403);
    expect(first.readyState, "the switch's connection").to.equal(WebSocket.OPEN);
    void peer.play(twoTones).catch(() => undefined);
    await c.until(10); // its audio still comes
    expect(await fork.stop()).to.deep.include({ dropped: 0 });
    expect(await upgradeStatus(port, req.url), 'the token after its fork ended').to.equal(403);
  });

  it('a client that resets its TCP connection during the upgrade (half a request; a refused one): the server goes on, the next fork works', async () => {
    const { leg, peer } = await suite.call();
    const port = await suite.backend.taps.port();
    // the HTTP server under the fork server's ws (a ws internal: no public seam gives its raw TCP connections)
    const httpServer = ((suite.backend.taps as unknown as { wss: WebSocketServer }).wss as unknown as { _server: net.Server })._server;
    const head = `GET /fork/AAAAAAAAAAAAAAAAAAAAAAAA HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`;
    const rest = `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ${FORK_SUBPROTOCOL}\r\n\r\n`;
    for (const [what, request] of [
      ['half an upgrade request', head],
      ['a whole one, refused (its token waits for nothing)', head + rest],
    ] as const) {
      const accepted = once(httpServer, 'connection') as Promise<[net.Socket]>;
      const sock = net.connect(port, '127.0.0.1');
      sock.on('error', () => undefined);
      await once(sock, 'connect');
      const [serverSide] = await accepted;
      const serverClosed = new Promise((r) => serverSide.once('close', r)); // not events.once: its 'error' (a parse error) is the server's to handle
      sock.write(request);
      if (request === head) sock.resetAndDestroy();
      else sock.once('data', () => sock.resetAndDestroy()); // the 403 on its way
      await serverClosed;
      expect(httpServer.listening, what).to.equal(true);
    }
    const c = collector();
    const fork = await leg.forkAudioStart({ mix: 'in', onFrame: c.onFrame });
    void peer.play(twoTones).catch(() => undefined);
    await c.until(10);
    await fork.stop();
  });
});
