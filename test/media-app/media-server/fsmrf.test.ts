// media-app's fsmrf backend (media-app/media-server/fsmrf/backend.ts) against our engine's event socket
// (testkit/esl/switch-rig.ts: the switch, its SIP face, and an fsmrf-capable Srf, all real, on loopback): a leg's
// endpoint made through drachtio-fsmrf answers a far end's offer, the far end hears what play and say
// send, its RFC 4733 digits come back from playCollect, and what needs the engine's own taps (the AI
// voice path, echo cancellation, VAD) is refused by name, never a silent no-op.
import { expect } from 'chai';
import type net from 'node:net';
import path from 'node:path';
import type { FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';
import { LegSocketClosed } from '../../../media-app/media-server/fsmrf/leg-socket';
import { MediaBackendUnsupported } from '../../../media-app/media-server/port';
import fs from 'node:fs';
import http from 'node:http';
import { wavFile } from '../../../core/audio/wav';
import os from 'node:os';
import { EgressPolicy, egressSettingsFromEnv } from '../../../core/net';
import { SharedPrompts } from '../../../media-app/media-server/fsmrf/shared-prompts';
import { readWav } from '../../../testkit/media-engine/support';
import { toneShare } from '../../../testkit/media-engine/far-end';
import { useFsmrfSuite } from '../../../testkit/esl/fsmrf-suite';

describe('media-app fsmrf backend against our event socket', function () {
  this.timeout(30_000);
  // as app.ts sets it: media-app fetches a prompt URL through its egress policy (here public addresses
  // and loopback, opted in, where the test's prompt is served) into a directory shared with the switch
  const egress = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
  const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'fsmrf-leg-prompts-'));
  const suite = useFsmrfSuite({ ready: (backend) => backend.promptsIn(new SharedPrompts(shared, egress, { cacheDir: `${shared}-cache` })) });
  // 0.8 s of 440 Hz at 8 kHz over loopback HTTP
  const tone = wavFile(
    Int16Array.from({ length: 6400 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000))),
    8000,
  );
  const server = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(tone));
  server.on('error', () => undefined);
  before(() => new Promise<void>((r) => server.listen(0, '127.0.0.1', r)));
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    fs.rmSync(shared, { recursive: true, force: true });
    fs.rmSync(`${shared}-cache`, { recursive: true, force: true });
  });

  /** The switch's side of a leg's channel socket (the outbound connection it dialled to fsmrf for that channel). */
  function channelSocket(uuid: string): net.Socket {
    const listener = [...suite.rig.esl.connections].find((l) => l.session?.channel.uuid === uuid);
    if (!listener) throw new Error(`no channel socket for ${uuid}`);
    return (listener as unknown as { socket: net.Socket }).socket; // the Listener's own socket, reset as a crash would
  }

  /** Resolves with its data when the switch starts `app` on the leg (its CHANNEL_EXECUTE, on the leg's own socket). */
  function executing(leg: FsmrfCallEndpoint, app: string): Promise<string | null> {
    return new Promise((resolve) => {
      const listener = (evt: { getHeader(name: string): string | null }) => {
        if (evt.getHeader('Application') !== app) return;
        leg.fs.conn?.off(`esl::event::CHANNEL_EXECUTE::${leg.id}`, listener);
        resolve(evt.getHeader('Application-Data'));
      };
      leg.fs.conn?.on(`esl::event::CHANNEL_EXECUTE::${leg.id}`, listener);
    });
  }

  it('play: the far end hears the prompt; the result is the played length', async () => {
    const { leg, peer } = await suite.call();
    const heard = path.join(suite.dir, 'play.wav');
    const rec = await peer.startRecord(heard);
    const r = await leg.play('tone_stream://%(800,0,440)');
    await peer.stopRecord(heard);
    await rec.done;
    expect(r.playbackMilliseconds).to.be.within(700, 900);
    expect(toneShare(readWav(heard).samples, 440, 8000), 'the far end hears the tone').to.be.above(0.5);
  });

  it("say: the far end hears speech through the switch's speak", async () => {
    const { leg, peer } = await suite.call();
    const heard = path.join(suite.dir, 'say.wav');
    const rec = await peer.startRecord(heard);
    const r = await leg.say('one two three');
    await peer.stopRecord(heard);
    await rec.done;
    expect(r.playbackMilliseconds).to.be.above(300);
    const samples = readWav(heard).samples;
    const loud = samples.filter((s) => Math.abs(s) > 1000).length;
    expect(loud, 'speech, not silence').to.be.above(800);
  });

  it("say: a customer's ${…} reaches the switch's speak as words, with nothing to expand (the switch expands an application's argument)", async () => {
    const { leg } = await suite.call();
    const failures: string[] = [];
    const onFailed = (e: Error) => failures.push(e.message);
    suite.rig.esl.on('failed', onFailed);
    const data = new Promise<string | null>((resolve) => {
      const listener = (evt: { getHeader(name: string): string | null }) => {
        if (evt.getHeader('Application') !== 'speak') return;
        leg.fs.conn?.off(`esl::event::CHANNEL_EXECUTE::${leg.id}`, listener);
        resolve(evt.getHeader('Application-Data'));
      };
      leg.fs.conn?.on(`esl::event::CHANNEL_EXECUTE::${leg.id}`, listener);
    });
    try {
      await leg.say('one ${system(touch /tmp/x)} $${x} ${direction}');
    } finally {
      suite.rig.esl.off('failed', onFailed);
    }
    expect(await data).to.match(/\|one \$ \{system\(touch \/tmp\/x\)\} \$ \$ \{x\} \$ \{direction\}$/);
    expect(failures, 'no API command in an expansion').to.deep.equal([]);
  });

  it("playCollect: the far end's RFC 4733 digits reach the caller of the port, ended by the terminator", async () => {
    const { leg, peer } = await suite.call();
    leg.fs.once('playback-start', () => void peer.sendDtmf('42#', 100));
    const r = await leg.playCollect({ file: 'silence_stream://5000', min: 1, max: 4, timeout: 3000, digitTimeout: 3000 });
    expect(r.digits).to.equal('42');
    expect(r.terminatorUsed).to.equal('#');
  });

  it('record: what the far end sends is written to the file, for the time limit', async () => {
    const { leg, peer } = await suite.call();
    const file = path.join(suite.dir, 'rec.wav');
    const playing = peer.play('tone_stream://%(3000,0,440)');
    const r = await leg.record(file, { duration: 1 });
    await peer.stopPlayback();
    await playing.catch(() => undefined);
    expect(r.recordMilliseconds).to.be.within(800, 1300);
    expect(toneShare(readWav(file).samples, 440, 8000), 'the recording holds the tone').to.be.above(0.5);
  });

  it("bridge: one far end hears the other's audio; unbridge parks them again", async () => {
    const a = await suite.call();
    const b = await suite.call();
    await a.leg.bridge(b.leg);
    const heard = path.join(suite.dir, 'bridged.wav');
    const rec = await b.peer.startRecord(heard);
    await a.peer.play('tone_stream://%(800,0,440)');
    await b.peer.stopRecord(heard);
    await rec.done;
    expect(toneShare(readWav(heard).samples, 440, 8000), 'b hears a through the bridge').to.be.above(0.5);
    await a.leg.unbridge();
  });

  it('an http(s) prompt is fetched by media-app: the switch plays the file in the shared directory (never the URL), removed after', async () => {
    const { leg, peer } = await suite.call();
    const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/tone.wav`;
    const heard = path.join(suite.dir, 'url.wav');
    const rec = await peer.startRecord(heard);
    const started = executing(leg, 'playback');
    const r = await leg.play(url);
    await peer.stopRecord(heard);
    await rec.done;
    const data = await started;
    expect(data, 'the switch was given the fetched file').to.match(new RegExp(`^${shared}/p-[^/]+/[^/]+\\.wav$`));
    expect(r.playbackMilliseconds).to.be.within(700, 900);
    expect(toneShare(readWav(heard).samples, 440, 8000), 'the far end hears the tone').to.be.above(0.5);
    expect(fs.readdirSync(shared), 'nothing left in the shared directory').to.deep.equal([]);
  });

  it('playCollect with an http(s) prompt and invalid-input prompt: media-app fetches them, the switch is given the files (never the URL), removed after', async () => {
    const { leg } = await suite.call();
    const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/tone.wav`;
    const started = executing(leg, 'play_and_get_digits');
    const r = await leg.playCollect({ file: url, invalidFile: url, min: 1, max: 1, tries: 1, timeout: 300 });
    const data = (await started) ?? '';
    expect(data, 'no URL reaches the switch').not.to.match(/https?:/);
    const files = data.split(' ').filter((a) => a.startsWith(`${shared}/`));
    expect(files, 'the prompt and the invalid-input prompt, fetched into the shared directory').to.have.length(2);
    for (const f of files) expect(f).to.match(new RegExp(`^${shared}/p-[^/]+/[^/]+\\.wav$`));
    expect(r.digits).to.equal('');
    expect(r.playbackMilliseconds, 'the fetched tone played').to.be.within(700, 900);
    expect(fs.readdirSync(shared), 'nothing left in the shared directory').to.deep.equal([]);
  });

  it("a prompt URL the egress policy refuses fails as the engine's play says it, nothing left", async () => {
    const { leg } = await suite.call();
    const err = await leg.play(['silence_stream://100', 'http://10.0.0.1:9/prompt.wav']).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as Error).message).to.match(/^http:\/\/10\.0\.0\.1:9\/prompt\.wav: the URL's host is a private address/);
    expect((err as { code?: string }).code).to.equal('REFUSED');
    expect(fs.readdirSync(shared), 'nothing left in the shared directory').to.deep.equal([]);
  });

  it('refuses by name what needs the engine taps: echo cancellation, RTP capture, a spoken collect prompt', async () => {
    const { leg } = await suite.call();
    const refusals = [leg.echoCancel(), leg.captureRtp(), leg.playCollect({ say: { text: 'press one' } })];
    for (const p of refusals) {
      const err = await p.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(MediaBackendUnsupported);
      expect((err as Error).message).to.match(/not available on the fsmrf media backend/);
    }
    expect(suite.backend.refuseAiTalk().message).to.equal(
      "ai_talk (the AI voice path) is not available on the fsmrf media backend (MEDIA_SERVER=freeswitch://…): it needs the embedded engine's own media taps",
    );
  });

  it("a reset of a leg's event socket mid-call: the pending play and say reject with LegSocketClosed (no hang), and what is asked after too", async () => {
    const a = await suite.call();
    const b = await suite.call();
    const started = Promise.all([executing(a.leg, 'playback'), executing(b.leg, 'speak')]);
    const playing = settled(a.leg.play('tone_stream://%(20000,0,440)'));
    const saying = settled(b.leg.say('one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen'));
    await started;
    // the switch's side of each channel's socket sends a TCP reset (the switch crashed or the network cut it)
    for (const leg of [a.leg, b.leg]) channelSocket(leg.id).resetAndDestroy();
    const [played, said] = await Promise.all([playing, saying]);
    expect(played).to.be.instanceOf(LegSocketClosed);
    expect((played as Error).message).to.equal("play: the switch's event socket for this leg closed before it finished (a reset, the switch gone, or the channel hung up)");
    expect(said).to.be.instanceOf(LegSocketClosed);
    expect((said as Error).message).to.match(/^say: the switch's event socket for this leg closed/);
    expect(await settled(a.leg.play('silence_stream://100'))).to.be.instanceOf(LegSocketClosed);
    expect(await settled(b.leg.record(path.join(suite.dir, 'after-reset.wav'), { duration: 1 }))).to.be.instanceOf(LegSocketClosed);
  });

  it("a command in flight when the leg's or the room's socket resets rejects with LegSocketClosed: sendDtmf, stopPlayback, stopRecord, a room's recording", async () => {
    const a = await suite.call();
    const mix = await suite.backend.createMix(`reset-room-${Date.now()}`);
    // the switch stops reading each socket (so nothing is answered), then the socket resets: what was asked is in flight
    const sockets = [channelSocket(a.leg.id), channelSocket(mix.controlLegUuid)];
    for (const s of sockets) s.pause();
    const asked = [a.leg.sendDtmf('12'), a.leg.stopPlayback(), a.leg.stopRecord(), mix.startRecording(path.join(suite.dir, 'room.wav'))].map(settled);
    for (const s of sockets) s.resetAndDestroy();
    const [dtmf, stop, stopRec, rec] = await Promise.all(asked);
    for (const [what, err] of Object.entries({ dtmf, stop, stopRec, rec })) expect(err, what).to.be.instanceOf(LegSocketClosed);
    expect((rec as Error).message).to.match(/^conference recording start: the switch's event socket/);
    await mix.destroy().catch(() => undefined);
  });

  it('a room whose name the switch would read as more than a name (a space, @profile, +flags, {vars}) is refused before it is asked', async () => {
    for (const name of ['a b', 'room@wideband', 'room+flags{mute}', '{x=1}room', '']) {
      expect(await settled(suite.backend.createMix(name)), name)
        .to.be.instanceOf(Error)
        .with.property('message')
        .match(/conference name on the switch/);
    }
  });
});

/** What a promise settled with: its error, or null when it resolved. */
function settled(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => null,
    (e: unknown) => e,
  );
}
