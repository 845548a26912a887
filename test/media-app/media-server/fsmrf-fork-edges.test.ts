// Audio taps on the fsmrf backend when the switch misbehaves (media-app/media-server/fsmrf/fork-tap.ts),
// against our switch (test/esl/rig.ts), all real on loopback. The tap server listens on `localhost`
// and the switch resolves that name through a resolver of the test's that answers no query (its
// resolver times out after seconds): the switch answers +OK to uuid_audio_fork and then says nothing
// (no connection, no event) for longer than the fork's connect deadline. Answering NXDOMAIN instead
// (`dns.mode`), the switch fails the connect at once with its mod_audio_fork::connect_failed event,
// as a FreeSWITCH that cannot reach the server. A `ws` client with the fork's token plays the
// switch's mod_audio_fork connection where a test needs one: a text message, an oversized message, a
// reset right after the upgrade request.
import { expect } from 'chai';
import dgram from 'node:dgram';
import { once } from 'node:events';
import net from 'node:net';
import WebSocket from 'ws';
import { FORK_SUBPROTOCOL, ForkTapError, type ForkTapServer } from '../../../media-app/media-server/fsmrf/fork-tap';
import { EgressPolicy, egressSettingsFromEnv } from '../../../core/net';
import type { EslServerOptions } from '../../../esl/server';
import type { MediaFork } from '../../../media-app/media-server/tap';
import type { ForkOptions } from '../../../media-engine';
import { useFsmrfSuite } from './fsmrf-suite';

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

/** The fork server's tokens waiting for a connection (its private map, read by the test only). */
const waitingTokens = (taps: ForkTapServer) => [...(taps as unknown as { waiting: Map<string, unknown> }).waiting.keys()];

/** The status a WebSocket upgrade with `path` gets (`open` when it opened). */
function upgradeStatus(port: number, path: string): Promise<number | 'open'> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, FORK_SUBPROTOCOL);
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
}

describe('media-app fsmrf backend: audio taps with a misbehaving switch', function () {
  this.timeout(30_000);
  const CONNECT_MS = 400;
  const rigOpts: Partial<EslServerOptions> = {};
  let dns: { port: number; sock: dgram.Socket; mode: 'silent' | 'nxdomain' };
  before(async () => {
    dns = await dnsServer();
    rigOpts.egress = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', EGRESS_DNS_SERVERS: `127.0.0.1:${dns.port}` }));
  });
  after(() => dns?.sock.close());
  afterEach(() => (dns.mode = 'silent'));
  const suite = useFsmrfSuite({ rig: rigOpts, connect: { taps: { host: 'localhost', port: 0, connectTimeoutMs: CONNECT_MS } } });

  /**
   * Starts a fork and gives its token once it waits for its connection (checked again at each query the
   * switch makes of the resolver: the fork's own comes after its token waits), with the fork's start,
   * settled when the deadline passes or a client connects.
   */
  async function startFork(start: () => Promise<unknown>): Promise<{ token: string; started: Promise<unknown> }> {
    const known = new Set(waitingTokens(suite.backend.taps));
    const started = start().then(
      (f) => f,
      (e: unknown) => e,
    );
    for (;;) {
      const fresh = waitingTokens(suite.backend.taps).filter((t) => !known.has(t));
      if (fresh.length) {
        expect(fresh, 'one new token waiting').to.have.length(1);
        return { token: fresh[0]!, started };
      }
      await once(dns.sock, 'message');
    }
  }

  /** A client playing the switch's connection for `token`, open. */
  async function playSwitch(token: string): Promise<WebSocket> {
    const port = await suite.backend.taps.port();
    const ws = new WebSocket(`ws://127.0.0.1:${port}/fork/${token}`, FORK_SUBPROTOCOL);
    ws.on('error', () => undefined);
    await once(ws, 'open');
    return ws;
  }

  it("a switch that fails the connect (mod_audio_fork::connect_failed): the start fails at once with the switch's reason, not at the deadline; nothing waits after", async () => {
    const { leg } = await suite.call();
    dns.mode = 'nxdomain';
    const t0 = Date.now();
    const err = await leg.forkAudioStart({ mix: 'in', onFrame: () => undefined }).then(
      () => null,
      (e: unknown) => e,
    );
    const took = Date.now() - t0;
    expect(err).to.be.instanceOf(ForkTapError);
    expect((err as Error).message, "the switch's reason").to.equal('the switch could not connect the audio fork: the destination host name could not be resolved');
    expect(took, 'before the deadline').to.be.below(CONNECT_MS);
    expect(waitingTokens(suite.backend.taps), 'no connection waited for').to.deep.equal([]);
    // a fork started after it is not failed by it: the silent switch's fork waits out its deadline
    dns.mode = 'silent';
    const late = await leg.forkAudioStart({ mix: 'in', onFrame: () => undefined }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(late).to.match(/^the switch did not connect the audio fork within/);
  });

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

  it('a switch that answers +OK and says nothing after: the start fails after the deadline, nothing waits after, the leg forks again', async () => {
    const { leg } = await suite.call();
    const t0 = Date.now();
    const { token, started } = await startFork(() => leg.forkAudioStart({ mix: 'in', onFrame: () => undefined }));
    const err = await started;
    const took = Date.now() - t0;
    expect(err).to.be.instanceOf(ForkTapError);
    expect((err as Error).message).to.match(new RegExp(`^the switch did not connect the audio fork within ${CONNECT_MS} ms \\(can it reach localhost:\\d+\\?\\)$`));
    expect((err as Error).message, 'the token is never told').not.to.include(token);
    expect(took, 'failed at the deadline').to.be.within(CONNECT_MS, CONNECT_MS + 1500);
    expect(waitingTokens(suite.backend.taps), 'no connection waited for').to.deep.equal([]);
    const port = await suite.backend.taps.port();
    expect(await upgradeStatus(port, `/fork/${token}`), 'the token after the deadline').to.equal(403);
    // the leg goes on: a fork of it starts (a client playing the switch) and gets its audio
    let gotFrame: (f: Int16Array) => void = () => undefined;
    const firstFrame = new Promise<Int16Array>((r) => (gotFrame = r));
    const next = await startFork(() => leg.forkAudioStart({ mix: 'in', onFrame: (f) => gotFrame(f) }));
    const ws = await playSwitch(next.token);
    const fork = (await next.started) as MediaFork;
    ws.send(Buffer.alloc(320, 1), { binary: true });
    expect((await firstFrame)[0]).to.equal(0x0101);
    expect(await fork.stop()).to.deep.include({ sent: 1 });
  });
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

  /** A fork of `leg` whose connection is a client of the test's; its frames, and `count(n)` once n came. */
  async function clientFork(leg: { forkAudioStart: (o: ForkOptions) => Promise<MediaFork> }, mix: 'in' | 'out' = 'in', legRate = false) {
    const frames: Int16Array[] = [];
    let want = { n: Infinity, done: () => undefined as void };
    const onFrame = (f: Int16Array) => {
      frames.push(f);
      if (frames.length >= want.n) want.done();
    };
    const { token, started } = await startFork(() => leg.forkAudioStart({ mix, legRate, onFrame }));
    const ws = await playSwitch(token);
    const fork = await started;
    if (fork instanceof Error) throw fork;
    const count = (n: number) => new Promise<Int16Array[]>((r) => (frames.length >= n ? r(frames) : (want = { n, done: () => r(frames) })));
    return { fork: fork as MediaFork, ws, frames, next: async () => (await count(frames.length + 1)).at(-1)! };
  }

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
        for (let at = 0, k = 0; at < bytes.length; at += cuts[k++ % cuts.length]!) f.ws.send(bytes.subarray(at, at + cuts[k % cuts.length]!), { binary: true });
        while (f.frames.length < 50) await f.next();
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
    const a = await clientFork(leg);
    const b = await clientFork(leg);
    const aClosed = once(a.ws, 'close');
    a.ws.send('{"type":"json","data":{}}');
    expect(await within(a.fork.ended!, 2000)).to.equal('the switch sent a text message on the audio fork (it sends binary audio only)');
    expect((await aClosed)[0], "the text sender's close code").to.equal(1003);
    expect(await a.fork.stop(), 'ended already').to.equal(null);
    // b untouched: its audio still comes
    const frame = b.next();
    b.ws.send(Buffer.alloc(320, 2), { binary: true });
    expect((await frame)[0]).to.equal(0x0202);
    expect(await within(b.fork.ended!, 0)).to.equal('pending');
    const bClosed = once(b.ws, 'close');
    b.ws.send(Buffer.alloc(256 * 1024 + 2), { binary: true });
    expect(await within(b.fork.ended!, 2000)).to.equal("the switch's audio fork connection failed: a message over 262144 bytes (closed with 1009)");
    expect((await bClosed)[0]).to.equal(1009);
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
    const { token, started } = await startFork(() => leg.forkAudioStart({ mix: 'in', onFrame: () => undefined }));
    const sock = net.connect(port, '127.0.0.1');
    sock.on('error', () => undefined);
    await once(sock, 'connect');
    sock.write(
      `GET /fork/${token} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ${FORK_SUBPROTOCOL}\r\n\r\n`,
    );
    sock.resetAndDestroy();
    const r = await started;
    // the upgrade was taken (the fork ends with its dropped connection) or not (the fork's start fails at the deadline)
    if (r instanceof Error) expect(r).to.be.instanceOf(ForkTapError);
    else expect(await within((r as MediaFork).ended!, 2000)).to.match(/^the switch's audio fork connection closed \(code 1006\)/);
    const c = await clientFork(leg);
    const frame = c.next();
    c.ws.send(Buffer.alloc(320, 4), { binary: true });
    expect((await frame)[0]).to.equal(0x0404);
    await c.fork.stop();
  });
});
