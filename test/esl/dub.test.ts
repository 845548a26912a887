// uuid_dub (jambonz's mod_dub) through drachtio-fsmrf's Endpoint.dub against our switch: a track's
// file or speech is mixed into what the channel sends, over what it plays; silenceTrack and
// removeTrack stop it; the module's answers for what it refuses. The far end is an engine endpoint on
// real RTP (loopback); what it hears is recorded.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Endpoint } from '../../media-engine';
import { heardFor } from '../../testkit/media-engine/support';
import { toneShare } from '../../testkit/media-engine/far-end';
import { expectGoneAfterFlight, toneFrames } from './heard';
import { useFsmrfRig } from '../../testkit/esl/switch-rig';

describe('esl: uuid_dub through fsmrf (mod_dub tracks over the channel audio)', () => {
  const fx = useFsmrfRig();
  let wav: string;

  before(() => {
    wav = path.join(fx.dir, 'tone1000-16k.wav');
    execFileSync('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', wav, 'synth', '0.5', 'sine', '1000', 'vol', '0.5']);
  });

  /** What `peer` hears for `ms` (a WAV `name` in the rig's folder). */
  const listen = (peer: Endpoint, name: string, ms: number) => heardFor(peer, path.join(fx.dir, `${name}.wav`), ms);

  it('playOnTrack loop: the far end hears the file over the prompt; silenceTrack stops it, the track stays; removeTrack ends it', async () => {
    const { ep, peer } = await fx.call();
    void ep.play('tone_stream://%(5000,0,440)').catch(() => undefined);
    await ep.dub({ action: 'addTrack', track: 'ambient' });
    expect(fx.rig.esl.api.dub.tracks(ep.uuid)).to.deep.equal(['ambient']);
    // a half-second file, looped: heard for longer than itself
    await ep.dub({ action: 'playOnTrack', track: 'ambient', play: wav, loop: true });
    const both = (await listen(peer, 'dubbed', 1500)).subarray(8000);
    // past the file's first pass: both tones, and little else
    const [track, prompt] = [toneShare(both, 1000, 8000), toneShare(both, 440, 8000)];
    expect(track, 'the looped track').to.be.above(0.1);
    expect(prompt, 'the prompt under it').to.be.above(0.1);
    expect(track + prompt, 'the two tones are what the far end hears').to.be.above(0.8);
    await ep.dub({ action: 'silenceTrack', track: 'ambient' });
    const quiet = await listen(peer, 'silenced', 800);
    // frame by frame, after what was in flight (heard.ts), not past a fixed 200 ms
    await expectGoneAfterFlight(toneFrames(quiet, 1000), peer, 'the silenced track');
    expect(fx.rig.esl.api.dub.tracks(ep.uuid)).to.deep.equal(['ambient']);
    await ep.dub({ action: 'removeTrack', track: 'ambient' });
    expect(fx.rig.esl.api.dub.tracks(ep.uuid)).to.deep.equal([]);
  });

  it('two playOnTrack loop at once on a track (bgapi): one loop plays; silenceTrack silences it', async () => {
    const { ep, peer } = await fx.call();
    await ep.dub({ action: 'addTrack', track: 'ambient' });
    const c = await fx.subscriber('BACKGROUND_JOB');
    // both jobs run on their own, the second while the first awaits the engine
    const play = `bgapi uuid_dub ${ep.uuid} playOnTrack ambient ${wav} loop\n\n`;
    c.send(play + play);
    const outputs: string[] = [];
    while (outputs.length < 2) {
      const f = await c.next();
      if (f.headers['Content-Type'] === 'text/event-plain') outputs.push(f.body.slice(f.body.indexOf('\n\n') + 2));
    }
    expect(outputs).to.deep.equal(['+OK Success\n', '+OK Success\n']);
    expect(toneShare(await listen(peer, 'twice', 600), 1000, 8000), 'the track plays').to.be.above(0.3);
    await ep.dub({ action: 'silenceTrack', track: 'ambient' });
    // the half-second clip's loop would come back within this
    const quiet = await listen(peer, 'silenced-twice', 1500);
    await expectGoneAfterFlight(toneFrames(quiet, 1000), peer, 'a loop of the track');
  });

  it('sayOnTrack: the text spoken on the track (espeak-ng) reaches the far end', async () => {
    const { ep, peer } = await fx.call();
    await ep.dub({ action: 'addTrack', track: 'voice' });
    await ep.dub({ action: 'sayOnTrack', track: 'voice', say: 'hello there, this is a dubbed voice' });
    const heard = await listen(peer, 'said', 1200);
    let sum = 0;
    for (const s of heard) sum += Math.abs(s);
    expect(sum / heard.length, 'speech on the line').to.be.above(200);
  });

  it("the module's answers: two tracks at most, unique names; a missing track or file, setGain, an unknown uuid", async () => {
    const { ep } = await fx.call();
    await ep.dub({ action: 'addTrack', track: 'a' });
    const failed = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: Error) => e.message,
      );
    expect(await failed(ep.dub({ action: 'addTrack', track: 'a' }))).to.equal('-ERR Operation Failed\n');
    await ep.dub({ action: 'addTrack', track: 'b' });
    expect(await failed(ep.dub({ action: 'addTrack', track: 'c' }))).to.equal('-ERR Operation Failed\n');
    expect(await failed(ep.dub({ action: 'playOnTrack', track: 'zz', play: wav }))).to.equal('-ERR Operation Failed\n');
    expect(await failed(ep.dub({ action: 'playOnTrack', track: 'a', play: path.join(fx.dir, 'none.wav') }))).to.equal('-ERR Operation Failed\n');
    expect(await failed(ep.dub({ action: 'playOnTrack', track: 'a', play: 'https://example.com/a.mp3' }))).to.equal('-ERR Operation Failed\n');
    expect(await failed(ep.dub({ action: 'removeTrack', track: 'zz' }))).to.equal('-ERR Operation Failed\n');
    const raw = async (args: string) => (await ep.api('uuid_dub', args)).getBody();
    expect(await raw(`${ep.uuid} setGain 3`)).to.equal('-ERR Operation Failed\n');
    expect(await raw(`${ep.uuid} playOnTrack a`)).to.match(/^-USAGE: /);
    expect(await raw(`${ep.uuid} dance a`)).to.match(/^-USAGE: /);
    expect(await raw('00000000-0000-0000-0000-000000000000 addTrack a')).to.equal('-ERR Invalid session\n');
    expect(await raw(`${ep.uuid}`)).to.equal('-ERR Operation Failed\n');
    // the hang-up ends the channel's tracks
    // the channel's engine endpoint going ends its tracks (its 'destroy', the dub's listener first)
    const gone = new Promise((r) => fx.rig.esl.channels.get(ep.uuid)!.channel.endpoint.once('destroy', r));
    await ep.destroy();
    await gone;
    expect(fx.rig.esl.api.dub.tracks(ep.uuid)).to.deep.equal([]);
  });
});
