// Audio taps on the fsmrf backend when the switch misbehaves (media-app/media-server/fsmrf/fork-tap.ts),
// against our switch (testkit/esl/switch-rig.ts), all real on loopback. The tap server listens on `localhost`
// and the switch resolves that name through a resolver of the test's that answers no query (its
// resolver times out after seconds): the switch answers +OK to uuid_audio_fork and then says nothing
// (no connection, no event) for longer than the fork's connect deadline. Answering NXDOMAIN instead
// (`dns.mode`), the switch fails the connect at once with its mod_audio_fork::connect_failed event,
// as a FreeSWITCH that cannot reach the server. A `ws` client with the fork's token plays the
// switch's mod_audio_fork connection where a test needs one: a text message, an oversized message, a
// reset right after the upgrade request.
import { expect } from 'chai';
import dgram from 'node:dgram';
import { EventEmitter } from 'node:events';
import net from 'node:net';
import WebSocket from 'ws';
import { FORK_SUBPROTOCOL, ForkTapError, type FsmrfFork } from '../../../media-app/media-server/fsmrf/fork-tap';
import { EgressPolicy, egressSettingsFromEnv } from '../../../core/net';
import type { EslServerOptions } from '../../../esl/server';
import type { MediaFork } from '../../../media-app/media-server/tap';
import type { ForkOptions } from '../../../media-engine';
import { ArrivalWaits } from '../../../testkit/arrival-waits';
import { bounded, boundedOnce } from '../../../testkit/bounded';
import { useFsmrfSuite } from '../../../testkit/esl/fsmrf-suite';
import { upgradeStatus } from './fork-upgrade';

/** A DNS server on loopback answering no query ('silent'), or every query NXDOMAIN (its socket's 'message' per query). */
async function dnsServer(): Promise<{ port: number; sock: dgram.Socket; mode: 'silent' | 'nxdomain' }> {
  const sock = dgram.createSocket('udp4');
  const server = { port: 0, sock, mode: 'silent' as 'silent' | 'nxdomain' };
  sock.on('error', () => undefined);
  sock.on('message', (q: Buffer, from: dgram.RemoteInfo) => {
    if (q.length < 12 || server.mode === 'silent') return;
    let at = 12; // the question: labels up to the root, then type and class
    while (at < q.length && q[at] !== 0) at += q[at]! + 1;
    const r = Buffer.from(q.subarray(0, Math.min(q.length, at + 5)));
    r.writeUInt16BE(0x8183, 2); // a response, recursion desired and available, NXDOMAIN
    r.writeUInt16BE(0, 6);
    r.writeUInt16BE(0, 8);
    r.writeUInt16BE(0, 10);
    sock.send(r, from.port, from.address);
  });
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  server.port = sock.address().port;
  return server;
}

/** The legs of a suite: what forkAudioStart needs, and the fsmrf Endpoint its start command goes through. */
type ForkingLeg = { forkAudioStart: (o: ForkOptions) => Promise<MediaFork>; fs: { forkAudioStart: (o: { wsUrl: string }) => Promise<unknown> } };

/**
 * Starts a fork of `leg` and gives its token once the backend asks the switch to reach `ws://…/fork/<token>`
 * (seen on the leg's fsmrf Endpoint, the command's way to the switch), with the fork's start, settled when
 * the deadline passes or a client connects. Bounded: a start that fails before it asks, or no ask within
 * 10 s, rejects saying so.
 */
async function startFork(leg: ForkingLeg, start: () => Promise<unknown>): Promise<{ token: string; started: Promise<unknown> }> {
  const fs = leg.fs;
  const own = Object.prototype.hasOwnProperty.call(fs, 'forkAudioStart');
  const orig = fs.forkAudioStart;
  let asked: (url: string) => void = () => undefined;
  const url = new Promise<string>((r) => (asked = r));
  fs.forkAudioStart = function (this: unknown, o: { wsUrl: string }) {
    asked(o.wsUrl);
    return orig.call(this, o);
  };
  try {
    const started = start().then(
      (f) => f,
      (e: unknown) => e,
    );
    const first = await bounded(Promise.race([url, started.then((r) => ({ ended: r }))]), 10_000, "the backend's uuid_audio_fork start");
    if (typeof first !== 'string') throw new Error(`the fork's start ended before it asked the switch: ${String((first as { ended: unknown }).ended)}`);
    const m = /\/fork\/([A-Za-z0-9_-]+)$/.exec(first);
    expect(m, `a fork URL: ${first}`).to.not.equal(null);
    return { token: m![1]!, started };
  } finally {
    if (own) fs.forkAudioStart = orig;
    else delete (fs as { forkAudioStart?: unknown }).forkAudioStart;
  }
}

/** The bugs `leg`'s fsmrf Endpoint is asked to stop on the switch (uuid_audio_fork <uuid> stop <bug>), as asked; `asked(bug)` waits for one (bounded). */
function stopsAsked(leg: { fs: { forkAudioStop: (bug?: string) => Promise<unknown> } }) {
  const fs = leg.fs;
  const orig = fs.forkAudioStop;
  const bugs: string[] = [];
  const seen = new EventEmitter();
  fs.forkAudioStop = function (this: unknown, bug?: string) {
    bugs.push(String(bug));
    seen.emit('stop');
    return orig.call(this, bug);
  };
  const asked = async (bug: string) => {
    while (!bugs.includes(bug)) await boundedOnce(seen, 'stop', 10_000, `uuid_audio_fork stop ${bug} (asked: ${bugs.join(', ') || 'none'})`);
  };
  return { bugs, asked };
}

/** A client playing the switch's connection for `token`, open (bounded). */
async function playSwitch(port: number, token: string): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/fork/${token}`, FORK_SUBPROTOCOL);
  ws.on('error', () => undefined);
  await boundedOnce(ws, 'open', 10_000, 'the fork connection to open');
  return ws;
}

/** Resolves with `p`'s value, or 'pending' when it has not settled within `ms`. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'pending'>((r) => (timer = setTimeout(() => r('pending'), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('media-app fsmrf backend: audio taps with a misbehaving switch', function () {
  this.timeout(30_000);
  const rigOpts: Partial<EslServerOptions> = {};
  let dns: { port: number; sock: dgram.Socket; mode: 'silent' | 'nxdomain' };
  before(async () => {
    dns = await dnsServer();
    rigOpts.egress = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', EGRESS_DNS_SERVERS: `127.0.0.1:${dns.port}` }));
  });
  after(() => dns?.sock.close());
  afterEach(() => (dns.mode = 'silent'));

  // The connect deadline itself: short, so that it passes in the test; nothing here must connect in time.
  describe('the connect deadline (400 ms)', () => {
    const CONNECT_MS = 400;
    const suite = useFsmrfSuite({ rig: rigOpts, connect: { taps: { host: 'localhost', port: 0, connectTimeoutMs: CONNECT_MS } } });

    it('two forks of a leg awaiting their connections when connect_failed comes: the event names no bug, so it fails neither; both wait out the deadline', async () => {
      const { leg } = await suite.call();
      dns.mode = 'nxdomain';
      const t0 = Date.now();
      const start = () =>
        leg.forkAudioStart({ mix: 'in', onFrame: () => undefined }).then(
          () => null,
          (e: Error) => e.message,
        );
      const both = await Promise.all([start(), start()]);
      expect(Date.now() - t0, 'at the deadline').to.be.at.least(CONNECT_MS);
      for (const m of both) expect(m).to.match(/^the switch did not connect the audio fork within/);
    });

    it('a switch that answers +OK and says nothing after: the start fails at the deadline (not before, and not a hang); its token is refused after', async () => {
      const { leg } = await suite.call();
      const t0 = Date.now();
      const { token, started } = await startFork(leg, () => leg.forkAudioStart({ mix: 'in', onFrame: () => undefined }));
      const err = await started;
      const took = Date.now() - t0;
      expect(err).to.be.instanceOf(ForkTapError);
      expect((err as Error).message).to.match(new RegExp(`^the switch did not connect the audio fork within ${CONNECT_MS} ms \\(can it reach localhost:\\d+\\?\\)$`));
      expect((err as Error).message, 'the token is never told').not.to.include(token);
      expect(took, 'not before the deadline').to.be.at.least(CONNECT_MS);
      expect(took, 'at the deadline, not a hang').to.be.below(CONNECT_MS + 8000);
      const port = await suite.backend.taps.port();
      expect(await upgradeStatus(port, `/fork/${token}`), 'the token after the deadline').to.equal(403);
    });
  });

  // The tests where a client of the test's plays the switch's connection: a deadline a loaded machine
  // cannot miss, so that only what each test checks can fail it.
  describe('with a client playing the switch (a 10 s deadline)', () => {
    const CONNECT_MS = 10_000;
    const suite = useFsmrfSuite({ rig: rigOpts, connect: { taps: { host: 'localhost', port: 0, connectTimeoutMs: CONNECT_MS } } });

    /** A fork of `leg` whose connection is a client of the test's; its frames, `count(n)` once n came and `next()` the next one (bounded). */
    async function clientFork(leg: ForkingLeg, mix: 'in' | 'out' = 'in', legRate = false) {
      const frames: Int16Array[] = [];
      const waits = new ArrivalWaits();
      const onFrame = (f: Int16Array) => {
        frames.push(f);
        waits.check();
      };
      const { token, started } = await startFork(leg, () => leg.forkAudioStart({ mix, legRate, onFrame }));
      const ws = await playSwitch(await suite.backend.taps.port(), token);
      const fork = await started;
      if (fork instanceof Error) throw fork;
      const count = (n: number) => waits.until(() => frames.length >= n, 10_000, `${n} frames of the fork`);
      const next = async () => {
        const n = frames.length + 1;
        await count(n);
        return frames[n - 1]!;
      };
      return { fork: fork as MediaFork, ws, frames, count, next };
    }

    it("a switch that fails the connect (mod_audio_fork::connect_failed): the start fails with the switch's reason, not at the deadline; its token is refused after; the leg forks again", async () => {
      const { leg } = await suite.call();
      dns.mode = 'nxdomain';
      const t0 = Date.now();
      const { token, started } = await startFork(leg, () => leg.forkAudioStart({ mix: 'in', onFrame: () => undefined }));
      const err = await started;
      expect(err).to.be.instanceOf(ForkTapError);
      expect((err as Error).message, "the switch's reason").to.equal('the switch could not connect the audio fork: the destination host name could not be resolved');
      expect(Date.now() - t0, 'before the deadline').to.be.below(CONNECT_MS);
      const port = await suite.backend.taps.port();
      expect(await upgradeStatus(port, `/fork/${token}`), "the failed fork's token").to.equal(403);
      // a fork started after it is not failed by it: it gets its connection (a client playing the switch) and its audio
      dns.mode = 'silent';
      const next = await clientFork(leg);
      const frame = next.next();
      next.ws.send(Buffer.alloc(320, 1), { binary: true });
      expect((await frame)[0]).to.equal(0x0101);
      expect(await next.fork.stop()).to.deep.include({ sent: 1 });
    });

    it('frames re-cut from messages cut anywhere are the audio as sent, in order, each its own copy (mono and the right channel of stereo; 8 kHz, and 16 kHz on a G.722 leg)', async () => {
      const cuts = [1, 319, 321, 1000, 7, 640, 2, 3, 641, 1279];
      for (const [codec, rate] of [
        ['PCMU', 8000],
        ['G722', 16000],
      ] as const) {
        const { leg } = await suite.call({ codecs: [codec] });
        const n = rate / 50;
        for (const mix of ['in', 'out'] as const) {
          const what = `${mix} at ${rate} Hz`;
          const channels = mix === 'out' ? 2 : 1;
          const pcm = new Int16Array(50 * n * channels);
          for (let i = 0; i < pcm.length; i++) pcm[i] = ((i * 7919) % 65536) - 32768;
          const bytes = Buffer.from(pcm.buffer);
          const f = await clientFork(leg, mix, true);
          expect(f.fork.rate, what).to.equal(rate);
          const all = f.count(50);
          for (let at = 0, k = 0; at < bytes.length; at += cuts[k++ % cuts.length]!) f.ws.send(bytes.subarray(at, at + cuts[k % cuts.length]!), { binary: true });
          await all;
          const expected = Array.from({ length: 50 }, (_, j) => Int16Array.from({ length: n }, (_, i) => pcm[(j * n + i) * channels + channels - 1]!));
          expect(
            f.frames.map((x) => [...x]),
            what,
          ).to.deep.equal(expected.map((x) => [...x]));
          expect(await f.fork.stop(), what).to.deep.include({ sent: 50, dropped: 0 });
        }
      }
    });

    it('a text message ends that fork (1003), an oversized one too (1009), each with its reason; the other forks and the server go on', async () => {
      const { leg } = await suite.call();
      const stops = stopsAsked(leg);
      const a = await clientFork(leg);
      const b = await clientFork(leg);
      const aClosed = boundedOnce(a.ws, 'close', 10_000, "the text sender's close");
      a.ws.send('{"type":"json","data":{}}');
      expect(await within(a.fork.ended!, 10_000)).to.equal('the switch sent a text message on the audio fork (it sends binary audio only)');
      expect((await aClosed)[0], "the text sender's close code").to.equal(1003);
      // the switch's bug ended too (mod_audio_fork would keep it on the channel), once
      await stops.asked((a.fork as FsmrfFork).bug);
      expect(await a.fork.stop(), 'ended already').to.equal(null);
      expect(
        stops.bugs.filter((x) => x === (a.fork as FsmrfFork).bug),
        'stopped on the switch once',
      ).to.have.length(1);
      // b untouched: its audio still comes
      const frame = b.next();
      b.ws.send(Buffer.alloc(320, 2), { binary: true });
      expect((await frame)[0]).to.equal(0x0202);
      expect(await within(b.fork.ended!, 0)).to.equal('pending');
      const bClosed = boundedOnce(b.ws, 'close', 10_000, "the oversized sender's close");
      b.ws.send(Buffer.alloc(256 * 1024 + 2), { binary: true });
      expect(await within(b.fork.ended!, 10_000)).to.equal("the switch's audio fork connection failed: a message over 262144 bytes (closed with 1009)");
      expect((await bClosed)[0]).to.equal(1009);
      await stops.asked((b.fork as FsmrfFork).bug);
      // the server goes on: a new fork gets its audio
      const c = await clientFork(leg);
      const cFrame = c.next();
      c.ws.send(Buffer.alloc(320, 3), { binary: true });
      expect((await cFrame)[0]).to.equal(0x0303);
      expect(await c.fork.stop()).to.deep.include({ sent: 1, dropped: 0 });
    });

    it('a client that resets its connection right after a valid upgrade request: that fork fails or ends, the server goes on', async () => {
      const { leg } = await suite.call();
      const port = await suite.backend.taps.port();
      const { token, started } = await startFork(leg, () => leg.forkAudioStart({ mix: 'in', onFrame: () => undefined }));
      const sock = net.connect(port, '127.0.0.1');
      sock.on('error', () => undefined);
      await boundedOnce(sock, 'connect', 10_000, 'the raw connection');
      sock.write(
        `GET /fork/${token} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ${FORK_SUBPROTOCOL}\r\n\r\n`,
      );
      sock.resetAndDestroy();
      const r = await started;
      // the upgrade was taken (the fork ends with its dropped connection) or not (the fork's start fails at the deadline)
      if (r instanceof Error) expect(r).to.be.instanceOf(ForkTapError);
      else expect(await within((r as MediaFork).ended!, 10_000)).to.match(/^the switch's audio fork connection closed \(code 1006\)/);
      const c = await clientFork(leg);
      const frame = c.next();
      c.ws.send(Buffer.alloc(320, 4), { binary: true });
      expect((await frame)[0]).to.equal(0x0404);
      await c.fork.stop();
    });
  });
});
