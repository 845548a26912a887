// mod_audio_fork's audio from the server back into the call (jambonz's bidirectional audio), through
// drachtio-fsmrf's forkAudioStart against our switch: a playAudio message is heard by the far end over
// what the channel plays, killAudio and stop_play drop what is not played yet, raw binary frames are
// played when the fork was started with bidirectional streaming (dropped without it), and with
// bidirectional audio off playAudio names a WAV file the application plays. The far end is an engine
// endpoint on real RTP (loopback); what it hears is recorded.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import type { Endpoint } from '../../media-engine';
import { heardFor, readWav } from '../../testkit/media-engine/support';
import { toneShare } from '../../testkit/media-engine/far-end';
import { expectGoneAfterFlight, toneFrames } from './heard';
import { wavFile } from '../../core/audio/wav';
import { Heard, useForkRig } from './fork-support';

const EVENTS = ['connect', 'play_audio', 'kill_audio', 'error', 'disconnect'].map((n) => `mod_audio_fork::${n}`);

/** `seconds` of a sine at `hz`, 16-bit at `rate`. */
function sine(hz: number, seconds: number, rate: number): Int16Array {
  const out = new Int16Array(Math.round(seconds * rate));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(12000 * Math.sin((2 * Math.PI * hz * i) / rate));
  return out;
}
const b64 = (s: Int16Array) => Buffer.from(s.buffer, s.byteOffset, s.byteLength).toString('base64');

/** A 16-bit mono WAV of `samples` whose header says `rate` (any 32-bit value). */
function wavAt(samples: Int16Array, rate: number): string {
  const bytes = wavFile(samples, 8000);
  bytes.writeUInt32LE(rate, 24);
  bytes.writeUInt32LE((rate * 2) % 2 ** 32, 28);
  return bytes.toString('base64');
}

/** Until `pred` holds, checked every 10 ms; fails the test after 5 s. */
async function eventually(pred: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 5000; !pred(); await new Promise((r) => setTimeout(r, 10))) if (Date.now() > end) throw new Error(`${what}: not within 5 s`);
}

describe('esl: mod_audio_fork playAudio, killAudio and bidirectional audio through fsmrf', () => {
  const fx = useForkRig();

  /** A channel whose far end records what it hears (or the channel `on`), a fork to a fresh server (fsmrf's options), its connect. */
  async function forked(opts: { bidirectionalAudio?: { enabled?: string; streaming?: string; sampleRate?: number } } = {}, on?: { ep: FsEndpoint; peer: Endpoint; heard: Heard; bugname: string }) {
    const { ep, peer, heard } = on ?? (await fx.heardCall(EVENTS));
    const srv = await fx.server();
    await ep.forkAudioStart({ wsUrl: srv.url, mixType: 'mono', sampling: '8000', ...(on ? { bugname: on.bugname } : {}), ...opts });
    const c = await srv.connection();
    await heard.next('mod_audio_fork::connect');
    return { ep, peer, heard, c };
  }

  /** What `peer` hears for `ms` (a WAV `name` in the rig's folder). */
  const listen = (peer: Endpoint, name: string, ms: number) => heardFor(peer, path.join(fx.dir, `${name}.wav`), ms);

  it('playAudio (raw, 16 kHz): the far end hears it over what the channel plays; play_audio fires without the audio', async () => {
    const { ep, peer, heard, c } = await forked();
    void ep.play('tone_stream://%(3000,0,440)').catch(() => undefined);
    c.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 16000, audioContent: b64(sine(1000, 1.5, 16000)) } }));
    expect(await heard.next('mod_audio_fork::play_audio')).to.deep.equal({ audioContentType: 'raw', sampleRate: 16000 });
    const got = await listen(peer, 'play-audio', 1000);
    expect(toneShare(got, 1000, 8000), 'the server audio').to.be.above(0.2);
    expect(toneShare(got, 440, 8000), 'the prompt under it').to.be.above(0.2);
  });

  it('killAudio drops what the server sent and is not played yet (kill_audio); stop_play does the same', async () => {
    const { ep, peer, heard, c } = await forked();
    c.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 8000, audioContent: b64(sine(1000, 20, 8000)) } }));
    await heard.next('mod_audio_fork::play_audio');
    expect(toneShare(await listen(peer, 'before-kill', 600), 1000, 8000)).to.be.above(0.5);
    c.ws.send(JSON.stringify({ type: 'killAudio' }));
    await heard.next('mod_audio_fork::kill_audio');
    const after = await listen(peer, 'after-kill', 600);
    // frame by frame, after what was in flight (heard.ts): a fixed 200 ms left out was less than a far end's
    // jitter buffer at its widest holds
    await expectGoneAfterFlight(toneFrames(after, 1000), peer, 'the server audio after killAudio');

    c.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 8000, audioContent: b64(sine(700, 20, 8000)) } }));
    await heard.next('mod_audio_fork::play_audio');
    expect(toneShare(await listen(peer, 'before-stop-play', 600), 700, 8000)).to.be.above(0.5);
    expect(await ep.api('uuid_audio_fork', `${ep.uuid} stop_play`).then((e) => e.getBody())).to.equal('+OK Success\n');
    await expectGoneAfterFlight(toneFrames(await listen(peer, 'after-stop-play', 600), 700), peer, 'the server audio after stop_play');
  });

  it('bidirectional streaming: binary frames at the stream rate are played; without streaming they are dropped', async () => {
    const streamed = await forked({ bidirectionalAudio: { enabled: 'true', streaming: 'true', sampleRate: 16000 } });
    const clip = sine(1000, 1.5, 16000);
    for (let i = 0; i < clip.length; i += 320) streamed.c.ws.send(Buffer.from(clip.buffer, i * 2, Math.min(640, (clip.length - i) * 2)));
    expect(toneShare(await listen(streamed.peer, 'streamed', 1000), 1000, 8000)).to.be.above(0.5);

    const plain = await forked();
    for (let i = 0; i < clip.length; i += 320) plain.c.ws.send(Buffer.from(clip.buffer, i * 2, Math.min(640, (clip.length - i) * 2)));
    expect(toneShare(await listen(plain.peer, 'not-streamed', 1000), 1000, 8000)).to.be.below(0.1);
  });

  it('bidirectional audio off: play_audio names a WAV file the application plays; the file goes with the fork', async () => {
    const { ep, peer, heard, c } = await forked({ bidirectionalAudio: { enabled: 'false' } });
    c.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 8000, audioContent: b64(sine(1000, 1, 8000)) } }));
    const body = (await heard.next('mod_audio_fork::play_audio')) as { file: string; sampleRate: number };
    expect(body.sampleRate).to.equal(8000);
    expect(body.file).to.match(new RegExp(`${ep.uuid}_audio_fork_\\d+\\.tmp\\.wav$`));
    expect(toneShare(await listen(peer, 'nothing-played', 500), 1000, 8000), 'not played by itself').to.be.below(0.1);
    const file = path.join(fx.dir, 'played.wav');
    const rec = await peer.startRecord(file);
    await ep.play(body.file);
    await peer.stopRecord(file);
    await rec.done;
    expect(toneShare(readWav(file).samples, 1000, 8000)).to.be.above(0.5);
    await ep.forkAudioStop();
    await c.closed;
    await eventually(() => !fs.existsSync(body.file), 'the file removed with the fork');
  });

  it('two forks on one channel (bug names) write their playAudio files apart; each file goes with its own fork', async () => {
    const off = { bidirectionalAudio: { enabled: 'false' } };
    const one = await forked(off);
    const two = await forked(off, { ...one, bugname: 'second' });
    const clip = { type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 8000, audioContent: b64(sine(1000, 0.2, 8000)) } };
    one.c.ws.send(JSON.stringify(clip));
    const a = ((await one.heard.next('mod_audio_fork::play_audio')) as { file: string }).file;
    two.c.ws.send(JSON.stringify(clip));
    const b = ((await one.heard.next('mod_audio_fork::play_audio')) as { file: string }).file;
    expect(a).to.not.equal(b);
    expect(b).to.match(/_second_\d+\.tmp\.wav$/);
    await one.ep.forkAudioStop('second');
    await two.c.closed;
    await eventually(() => !fs.existsSync(b), "the second fork's file removed");
    expect(fs.existsSync(a), "the first fork's file stays while it runs").to.equal(true);
  });

  it('a playAudio the switch cannot play (WAV at 4 Hz, 500 Hz, 200 kHz, 2^32-1 Hz; not base64; an odd frame): play_audio with nothing played, the fork and the switch go on', async () => {
    for (const enabled of ['true', 'false']) {
      const { ep, peer, heard, c } = await forked({ bidirectionalAudio: { enabled, streaming: 'true', sampleRate: 8000 } });
      for (const rate of [4, 500, 200000, 3e9, 0xffffffff]) {
        c.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'wav', audioContent: wavAt(sine(1000, 0.1, 8000), rate) } }));
        expect(await heard.next('mod_audio_fork::play_audio'), `a WAV at ${rate} Hz`).to.deep.equal({ audioContentType: 'wav' });
      }
      c.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 8000, audioContent: '%%% not base64 ***' } }));
      expect(await heard.next('mod_audio_fork::play_audio')).to.deep.equal({ audioContentType: 'raw', sampleRate: 8000 });
      c.ws.send(Buffer.from([1, 2, 3]));
      // the fork still plays what the server sends, and the switch answers a command
      c.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 8000, audioContent: b64(sine(1000, 2, 8000)) } }));
      const body = (await heard.next('mod_audio_fork::play_audio')) as { file?: string };
      if (enabled === 'false') expect(fs.existsSync(body.file!), 'written after the bad ones').to.equal(true);
      else expect(toneShare(await listen(peer, `after-bad-${enabled}`, 600), 1000, 8000), 'played after the bad ones').to.be.above(0.5);
      expect(await ep.api('uuid_audio_fork', `${ep.uuid} send_text {"still":"here"}`).then((e) => e.getBody())).to.equal('+OK Success\n');
      expect(heard.names(), 'no error, no disconnect').to.deep.equal([]);
    }
  });

  it('a playAudio file that cannot be written: play_audio without a file; the fork goes on', async () => {
    const { heard, c } = await forked({ bidirectionalAudio: { enabled: 'false' } });
    const tmp = process.env.TMPDIR;
    process.env.TMPDIR = path.join(fx.dir, 'no-such-dir');
    try {
      c.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 8000, audioContent: b64(sine(1000, 0.2, 8000)) } }));
      expect(await heard.next('mod_audio_fork::play_audio')).to.deep.equal({ audioContentType: 'raw', sampleRate: 8000 });
    } finally {
      if (tmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmp;
    }
    c.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 8000, audioContent: b64(sine(1000, 0.2, 8000)) } }));
    expect(fs.existsSync(((await heard.next('mod_audio_fork::play_audio')) as { file: string }).file)).to.equal(true);
  });

  it('a server that resets the connection in the middle of playAudio: disconnect, the channel goes on', async () => {
    const { ep, peer, heard, c } = await forked({ bidirectionalAudio: { enabled: 'false' } });
    c.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 8000, audioContent: b64(sine(1000, 5, 8000)) } }));
    c.ws.terminate();
    await heard.next('mod_audio_fork::disconnect');
    heard.got.splice(0); // the clip's play_audio, when its file was written before the reset
    expect(await ep.api('uuid_audio_fork', `${ep.uuid} send_text {}`).then((e) => e.getBody()), 'the fork is gone').to.equal('-ERR Operation Failed\n');
    const again = await forked({ bidirectionalAudio: { enabled: 'false' } }, { ep, peer, heard, bugname: '' });
    again.c.ws.send(JSON.stringify({ type: 'playAudio', data: { audioContentType: 'raw', sampleRate: 8000, audioContent: b64(sine(1000, 0.2, 8000)) } }));
    await heard.next('mod_audio_fork::play_audio');
  });
});
