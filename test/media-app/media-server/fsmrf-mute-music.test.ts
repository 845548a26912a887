// A call's mute changed while its music keeps looping (media-app/call/media-state.ts over an fsmrf leg),
// against our switch (testkit/esl/switch-rig.ts, all real on loopback). The music is a `playback` application on
// the leg's channel; the switch runs a sendmsg'd application (set_mute) only after the running one
// (FreeSWITCH with event-lock, our switch too), so a mute sent as set_mute waited for the music's file
// to end. The mute is the switch's uuid_audio API command instead (mod_commands: the same
// switch_ivr_session_audio media bug set_mute writes), which takes effect at once: here well within a
// bound far under the 20 s file, the music going on unbroken.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { CallMediaState } from '../../../media-app/call/media-state';
import { readWav } from '../../../testkit/media-engine/support';
import { power, toneShare } from '../../../testkit/media-engine/far-end';
import { useFsmrfSuite } from '../../../testkit/esl/fsmrf-suite';
import { bounded } from '../../../testkit/bounded';

/** The music's tone and length: one file, far longer than any bound below. */
const MUSIC_HZ = 440;
const MUSIC_S = 20;
/** The party's own tone (what the leg reads from it). */
const PARTY_HZ = 1000;
/** Within this a mute must be applied: a tenth of the file. */
const BOUND_MS = 2000;

describe('media-app fsmrf backend: a mute while the music loops', function () {
  this.timeout(60_000);
  const suite = useFsmrfSuite();
  let music = '';
  let n = 0;

  before(() => {
    music = path.join(suite.dir, 'music.wav');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', music, 'synth', String(MUSIC_S), 'sine', String(MUSIC_HZ), 'vol', '0.5']);
  });

  type Recorder = { startRecord(f: string): Promise<{ done: Promise<unknown> }>; stopRecord(f: string): Promise<void> };

  /** What `rec` records over 800 ms (the far end, or the switch channel's engine endpoint). */
  async function window(rec: Recorder): Promise<Int16Array> {
    const file = path.join(suite.dir, `w${++n}.wav`);
    const r = await rec.startRecord(file);
    await new Promise((res) => setTimeout(res, 800));
    await rec.stopRecord(file);
    await r.done;
    return readWav(file).samples;
  }

  /** The share of `hz` in what `rec` records over 800 ms. */
  const share = async (rec: Recorder, hz: number) => toneShare(await window(rec), hz, 8000);

  it("mute 'out' silences the looping music for the party at once, and its unmute brings the same music back", async () => {
    const { leg, peer } = await suite.call();
    const state = new CallMediaState(() => leg);
    const plays: string[] = [];
    const play = leg.play.bind(leg);
    leg.play = (f, o) => (plays.push(String(f)), play(f, o));
    await state.set({ moh: true, music });
    const playing = await window(peer);
    expect(toneShare(playing, MUSIC_HZ, 8000), 'the party hears the music').to.be.above(0.5);

    const t0 = performance.now();
    await bounded(state.set({ mute: 'out' }), BOUND_MS, 'the mute while the music plays (its file lasts 20 s)');
    // the window's first 200 ms may still hold what was in flight (the party's jitter buffer)
    expect(power((await window(peer)).subarray(1600)), 'the party hears nothing once muted').to.be.below(power(playing) / 1000);
    await bounded(state.set({ mute: '' }), BOUND_MS, 'the unmute while the music plays');
    expect(await share(peer, MUSIC_HZ), 'the party hears the music again').to.be.above(0.5);
    expect(performance.now() - t0, 'all of it inside one play of the file').to.be.below(MUSIC_S * 1000 - 5000);
    expect(plays, 'the music played on, never restarted').to.deep.equal([music]);
    await state.set({ moh: false });
  });

  it("mute 'in' takes the party's audio off the leg at once while the music loops, and its unmute puts it back", async () => {
    const { leg, peer } = await suite.call();
    const state = new CallMediaState(() => leg);
    await state.set({ moh: true, music });
    void peer.play(`tone_stream://%(${(MUSIC_S + 10) * 1000},0,${PARTY_HZ})`).catch(() => undefined);
    // what the leg reads, heard on the switch's own channel (a record_session through the leg would be an
    // application queued behind the music too): its engine endpoint records both directions mixed
    const channel = suite.rig.esl.channels.get(leg.uuid)?.channel.endpoint;
    if (!channel) throw new Error(`no channel ${leg.uuid} on the switch`);
    expect(await share(channel, PARTY_HZ), "the party's tone reaches the leg").to.be.above(0.1);

    await bounded(state.set({ mute: 'in' }), BOUND_MS, 'the mute while the music plays (its file lasts 20 s)');
    expect(await share(channel, PARTY_HZ), "the party's tone is off the leg once muted").to.be.below(0.02);
    await bounded(state.set({ mute: '' }), BOUND_MS, 'the unmute while the music plays');
    expect(await share(channel, PARTY_HZ), "the party's tone reaches the leg again").to.be.above(0.1);
    await state.set({ moh: false });
  });
});
