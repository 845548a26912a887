// uuid_audio_fork (mod_audio_fork) through drachtio-fsmrf's public API (forkAudioStart/SendText/Pause/
// Stop, addCustomEventListener) against our switch: a real `ws` server on loopback gets the metadata and
// the far end's real audio (a tone an engine endpoint sends over RTP), its text frames come back as
// mod_audio_fork events, and every failure of the connection is an event, never the end of the process.
// The URL goes through the egress policy: loopback is allowed here only by EGRESS_ALLOW_CIDRS.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { SUBPROTOCOL } from '../../esl/fork/session';
import { toneShare } from '../../testkit/media-engine/far-end';
import { ForkServer, Heard, samplesOf, until, useForkRig } from './fork-support';
import { startFsmrfRig, type FsmrfRig } from '../../testkit/esl/switch-rig';
import { startDnsServer, type DnsServer } from '../support/dns-server';

const FORK_EVENTS = ['connect', 'connect_failed', 'disconnect', 'json', 'transcription', 'buffer_overrun'].map((n) => `mod_audio_fork::${n}`);

describe('esl: uuid_audio_fork through fsmrf (mod_audio_fork over a WebSocket)', () => {
  const fx = useForkRig();
  const { server } = fx;
  const call = () => fx.heardCall(FORK_EVENTS);
  let wav: string;

  before(() => {
    wav = path.join(fx.dir, 'tone440.wav');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', wav, 'synth', '1', 'sine', '440']);
  });

  it('start: the metadata first, then the caller as 8 kHz L16; a server text frame is an event; stop closes normally', async () => {
    const { ep, peer, heard } = await call();
    const srv = await server();
    await ep.forkAudioStart({ wsUrl: srv.url, mixType: 'mono', sampling: '8000', metadata: { callSid: 'c-1', note: 'two words' } });
    const c = await srv.connection();
    expect(c.req.headers['sec-websocket-protocol']).to.equal(SUBPROTOCOL);
    await heard.next('mod_audio_fork::connect');
    await until(c, () => c.texts.length > 0, 'the metadata');
    expect(JSON.parse(c.texts[0]!)).to.deep.equal({ callSid: 'c-1', note: 'two words' });

    await peer.play(wav);
    await until(c, () => c.audio.length >= 60, 'a second of audio');
    expect(c.audio.every((f) => f.length === 320)).to.equal(true); // 20 ms at 8 kHz, 16-bit mono
    expect(toneShare(samplesOf(c.audio), 440, 8000)).to.be.above(0.5);

    c.ws.send(JSON.stringify({ type: 'json', data: { said: 'hello' } }));
    expect(await heard.next('mod_audio_fork::json')).to.deep.equal({ type: 'json', data: { said: 'hello' } });
    c.ws.send(JSON.stringify({ type: 'transcription', data: { text: 'hi there' } }));
    expect(await heard.next('mod_audio_fork::transcription')).to.deep.equal({ text: 'hi there' });

    await ep.forkAudioSendText({ mark: 1 });
    await until(c, () => c.texts.length > 1, 'the sent text');
    expect(JSON.parse(c.texts[1]!)).to.deep.equal({ mark: 1 });

    // with the bug named: fsmrf 5.0.1's forkAudioStop(metadata) alone sends the text twice, which
    // mod_audio_fork reads as a bug named by the text (FreeSWITCH refuses it as we would)
    await ep.forkAudioStop('audio_fork', { bye: true });
    expect(await c.closed).to.equal(1000);
    expect(JSON.parse(c.texts.at(-1)!)).to.deep.equal({ bye: true });
    // we closed it: no disconnect event; the bug is gone, a second stop fails as FreeSWITCH's does
    expect(heard.names()).to.not.include('mod_audio_fork::disconnect');
    let err: Error | null = null;
    await ep.forkAudioStop().catch((e: Error) => (err = e));
    expect(String(err)).to.match(/-ERR Operation Failed/);
  });

  it('16 kHz from an 8 kHz leg (resampled), a named bug, pause and resume', async () => {
    const { ep, peer, heard } = await call();
    const srv = await server();
    await ep.forkAudioStart({ wsUrl: srv.url, mixType: 'mono', sampling: '16000', bugname: 'b16' });
    const c = await srv.connection();
    await heard.next('mod_audio_fork::connect');
    expect(c.texts).to.deep.equal([]); // no metadata asked, none sent
    await peer.play(wav);
    await until(c, () => c.audio.length >= 40, 'audio at 16 kHz');
    expect(c.audio.every((f) => f.length === 640)).to.equal(true);
    expect(toneShare(samplesOf(c.audio.slice(5)), 440, 16000)).to.be.above(0.5);

    await ep.forkAudioPause('b16');
    // text still goes while paused, after every frame sent before the pause (one stream, in order)
    await ep.forkAudioSendText('b16', { mark: 'paused' });
    await until(c, () => c.texts.length > 0, 'the mark');
    const settled = c.audio.length;
    await peer.play(wav);
    expect(c.audio.length, 'no audio while paused').to.equal(settled);
    await ep.forkAudioResume('b16');
    await peer.play(wav);
    await until(c, () => c.audio.length > settled + 20, 'audio after resume');
    await ep.forkAudioStop('b16');
    expect(await c.closed).to.equal(1000);
  });

  it('stereo: the caller on the left, what the caller hears on the right', async () => {
    const { ep, peer, heard } = await call();
    const srv = await server();
    await ep.forkAudioStart({ wsUrl: srv.url, mixType: 'stereo', sampling: '8000' });
    const c = await srv.connection();
    await heard.next('mod_audio_fork::connect');
    // the caller sends 440 Hz while the channel plays 1000 Hz to it
    await Promise.all([peer.play(wav), ep.play('tone_stream://%(1000,0,1000)')]);
    await until(c, () => c.audio.length >= 40, 'stereo audio');
    expect(c.audio.every((f) => f.length === 640)).to.equal(true);
    const all = samplesOf(c.audio);
    const left = all.filter((_, i) => i % 2 === 0);
    const right = all.filter((_, i) => i % 2 === 1);
    expect(toneShare(left, 440, 8000)).to.be.above(0.5);
    expect(toneShare(right, 1000, 8000)).to.be.above(0.5);
  });

  it('a server that refuses the upgrade, or nothing listening: connect_failed with the reason; the channel goes on', async () => {
    const { ep, heard } = await call();
    const refusing = await server({ verifyClient: (_i, cb) => cb(false, 403) });
    await ep.forkAudioStart({ wsUrl: refusing.url, mixType: 'mono', sampling: '8000' });
    const body = (await heard.next('mod_audio_fork::connect_failed')) as { reason: string };
    expect(body.reason).to.match(/403/);
    // the name is free again: the failed bug is gone
    const closed = await server();
    const port = (closed.wss.address() as { port: number }).port;
    await closed.close(); // closed again after the test: a no-op
    await ep.forkAudioStart({ wsUrl: `ws://127.0.0.1:${port}/`, mixType: 'mono', sampling: '8000' });
    expect(((await heard.next('mod_audio_fork::connect_failed')) as { reason: string }).reason).to.match(/ECONNREFUSED/);
    expect(heard.names()).to.not.include('mod_audio_fork::connect');
    expect(await ep.play('silence_stream://100')).to.have.property('playbackMilliseconds', '100');
  });

  it('a server that resets the connection mid-stream: disconnect; the process and the channel go on', async () => {
    const { ep, peer, heard } = await call();
    const srv = await server();
    await ep.forkAudioStart({ wsUrl: srv.url, mixType: 'mono', sampling: '8000' });
    const c = await srv.connection();
    await heard.next('mod_audio_fork::connect');
    void peer.play(wav);
    await until(c, () => c.audio.length >= 5, 'audio');
    (c.ws as unknown as { _socket: import('node:net').Socket })._socket.resetAndDestroy();
    await heard.next('mod_audio_fork::disconnect');
    expect(await ep.play('silence_stream://100')).to.have.property('playbackMilliseconds', '100');
    // a new fork under the default name can start again
    await ep.forkAudioStart({ wsUrl: srv.url, mixType: 'mono', sampling: '8000' });
    await heard.next('mod_audio_fork::connect');
  });

  it('graceful-shutdown while connecting: once the server accepts, nothing is sent and it gets a normal close', async () => {
    const { ep, peer, heard } = await call();
    // the server holds the upgrade until the shutdown has been asked for
    let accept: (ok: boolean) => void = () => undefined;
    let onAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => (onAsked = resolve));
    const srv = await server({
      verifyClient: (_i, cb) => {
        accept = cb;
        onAsked();
      },
    });
    await ep.forkAudioStart({ wsUrl: srv.url, mixType: 'mono', sampling: '8000', metadata: { callSid: 'c-2' } });
    await asked;
    expect(await ep.api('uuid_audio_fork', `${ep.uuid} graceful-shutdown`)).to.have.property('body', '+OK Success\n');
    accept(true);
    const c = await srv.connection();
    void peer.play('silence_stream://300');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([c.closed, new Promise<string>((r) => (timer = setTimeout(() => r('still open after 5 s'), 5000)))]).finally(() => clearTimeout(timer));
    expect(code).to.equal(1000);
    expect(c.texts, 'no metadata').to.deep.equal([]);
    expect(c.audio, 'no audio').to.deep.equal([]);
    // a command's answer on the channel's connection comes after every event fired before it
    await ep.api('uuid_exists', ep.uuid);
    expect(heard.names(), 'no connect, no disconnect').to.deep.equal([]);
    expect(fx.rig.esl.api.forks.bugs(ep.uuid), 'the bug ended').to.deep.equal([]);
  });

  it('the hang-up closes the fork without an event', async () => {
    const { ep, heard } = await call();
    const srv = await server();
    await ep.forkAudioStart({ wsUrl: srv.url, mixType: 'mixed', sampling: '8000' });
    const c = await srv.connection();
    await heard.next('mod_audio_fork::connect');
    await ep.destroy();
    await c.closed;
    expect(heard.names()).to.deep.equal([]);
  });
});

describe('esl: uuid_audio_fork and the egress policy (no allowlist)', () => {
  let rig: FsmrfRig;
  let dns: DnsServer;
  const open: FsEndpoint[] = [];

  before(async () => {
    // host names resolve through a DNS server on loopback (the policy's EGRESS_DNS_SERVERS), not /etc/hosts
    dns = await startDnsServer({ 'fork-loop.test': { a: ['127.0.0.1'] }, 'fork-private.test': { a: ['10.1.2.3'] } });
    rig = await startFsmrfRig({ egress: new EgressPolicy(egressSettingsFromEnv({ EGRESS_DNS_SERVERS: dns.server })) });
  });
  afterEach(async () => {
    for (const ep of open.splice(0)) await ep.destroy().catch(() => undefined);
  });
  after(async () => {
    await rig?.close();
    await dns?.close();
  });

  it('a loopback, private, link-local or localhost URL is refused: forkAudioStart rejects, nothing is dialled', async () => {
    const srv = await new ForkServer().ready();
    try {
      const ep = await rig.ms.createEndpoint();
      open.push(ep);
      const port = (srv.wss.address() as { port: number }).port;
      const cases: [string, RegExp][] = [
        [`ws://127.0.0.1:${port}/`, /loopback/],
        [`ws://localhost:${port}/`, /loopback/],
        [`ws://[::1]:${port}/`, /loopback/],
        ['ws://10.1.2.3/', /private/],
        ['wss://169.254.169.254/latest', /link-local/],
      ];
      for (const [url, why] of cases) {
        let err: Error | null = null;
        await ep.forkAudioStart({ wsUrl: url }).catch((e: Error) => (err = e));
        expect(String(err), url)
          .to.match(/-ERR Operation Failed/)
          .and.to.match(why);
      }
      expect(srv.conns).to.deep.equal([]);
    } finally {
      await srv.close();
    }
  });

  it('a host name that resolves to a loopback or private address: connect_failed, nothing is dialled', async () => {
    const srv = await new ForkServer().ready();
    try {
      const ep = await rig.ms.createEndpoint();
      open.push(ep);
      const heard = new Heard(ep, FORK_EVENTS);
      const port = (srv.wss.address() as { port: number }).port;
      for (const name of ['fork-loop.test', 'fork-private.test']) {
        // the name passes the syntax check (no DNS at the command): the fork starts, then its resolution is refused
        await ep.forkAudioStart({ wsUrl: `ws://${name}:${port}/`, mixType: 'mono', sampling: '8000' });
        const body = (await heard.next('mod_audio_fork::connect_failed')) as { reason: string };
        expect(body.reason, name).to.match(/resolves to an address that is not allowed/);
        expect(body.reason, 'the address is not shown').to.not.match(/127\.0\.0\.1|10\.1\.2\.3/);
        expect(dns.queries(name), `${name} was resolved`).to.be.at.least(1);
      }
      expect(heard.names(), 'no connect').to.not.include('mod_audio_fork::connect');
      expect(srv.conns, 'nothing dialled').to.deep.equal([]);
      expect(rig.esl.api.forks.bugs(ep.uuid), 'the bugs ended').to.deep.equal([]);
    } finally {
      await srv.close();
    }
  });
});

describe('esl: uuid_audio_fork against a server that never answers the upgrade', () => {
  const CONNECT_TIMEOUT_MS = 300;
  let rig: FsmrfRig;
  const open: FsEndpoint[] = [];

  before(async () => {
    rig = await startFsmrfRig({ egress: new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' })), forkConnectTimeoutMs: CONNECT_TIMEOUT_MS });
  });
  afterEach(async () => {
    for (const ep of open.splice(0)) await ep.destroy().catch(() => undefined);
  });
  after(async () => {
    await rig?.close();
  });

  it('past ESL_AUDIO_FORK_CONNECT_TIMEOUT_MS: connect_failed, the connection closed by the fork, the bug gone', async () => {
    // accepts TCP and reads the upgrade request, never answers it
    const accepted: { socket: net.Socket; closed: Promise<number> }[] = [];
    const silent = net.createServer((socket) => {
      socket.on('error', () => undefined);
      socket.resume();
      accepted.push({ socket, closed: new Promise((r) => socket.once('close', () => r(Date.now()))) });
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const ep = await rig.ms.createEndpoint();
      open.push(ep);
      const heard = new Heard(ep, FORK_EVENTS);
      const port = (silent.address() as net.AddressInfo).port;
      const t0 = Date.now();
      await ep.forkAudioStart({ wsUrl: `ws://127.0.0.1:${port}/fork`, mixType: 'mono', sampling: '8000' });
      const body = (await heard.next('mod_audio_fork::connect_failed')) as { reason: string };
      const failedAt = Date.now();
      expect(body.reason).to.match(/timed out/i);
      expect(failedAt - t0, 'held until the time limit').to.be.at.least(CONNECT_TIMEOUT_MS - 20);
      expect(accepted).to.have.length(1);
      // the fork destroyed its socket: the server sees the connection end without closing it itself
      let timer: NodeJS.Timeout | undefined;
      const closedAt = await Promise.race([accepted[0]!.closed, new Promise<string>((r) => (timer = setTimeout(() => r('still open after 2 s'), 2000)))]).finally(() => clearTimeout(timer));
      expect(closedAt, 'the connection closed').to.be.a('number');
      expect(rig.esl.api.forks.bugs(ep.uuid), 'the bug ended').to.deep.equal([]);
      // its timer went with it: while a second fork on the freed name is held to its own limit, the first
      // one's end is not heard again
      await ep.forkAudioStart({ wsUrl: `ws://127.0.0.1:${port}/fork`, mixType: 'mono', sampling: '8000' });
      await heard.next('mod_audio_fork::connect_failed');
      await ep.api('uuid_exists', ep.uuid); // every event fired before the answer has been delivered
      expect(heard.names(), 'one connect_failed each, nothing after').to.deep.equal([]);
      expect(accepted, 'one connection each').to.have.length(2);
    } finally {
      for (const a of accepted) a.socket.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});
