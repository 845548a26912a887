// startRecord / stopRecord on the fsmrf backend (media-app/media-server/fsmrf/record-session.ts: the
// switch's record_session and stop_record_session) against our event socket (testkit/esl/switch-rig.ts, all real
// on loopback): what the far end sends is in the file from the start until the stop, or until the limit;
// `done` settles with the switch's RECORD_STOP and the record_* length.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { readWav } from '../../../testkit/media-engine/support';
import { toneShare } from '../../../testkit/media-engine/far-end';
import { useFsmrfSuite } from '../../../testkit/esl/fsmrf-suite';
import { bounded } from '../../../testkit/bounded';

describe('media-app fsmrf backend: startRecord (record_session)', function () {
  this.timeout(30_000);
  const suite = useFsmrfSuite();

  it('records until stopRecord: the file holds the far end, `done` reports stopped and its length', async () => {
    const { leg, peer } = await suite.call();
    const file = path.join(suite.dir, 'session.wav');
    const playing = peer.play('tone_stream://%(3000,0,440)');
    const rec = await leg.startRecord(file);
    expect(rec.path).to.equal(file);
    await new Promise((r) => setTimeout(r, 1000)); // what is recorded: a second of the far end's tone
    await leg.stopRecord(file);
    const r = await rec.done;
    await peer.stopPlayback();
    await playing.catch(() => undefined);
    expect(r.reason).to.equal('stopped');
    expect(r.recordMilliseconds).to.be.within(800, 1500);
    const wav = readWav(file);
    expect((wav.samples.length / 8000) * 1000).to.be.within(800, 1500);
    expect(toneShare(wav.samples, 440, 8000), 'the recording holds the tone').to.be.above(0.5);
  });

  it('a limit ends it on its own (`duration`); the leg plays on meanwhile (record_session does not block it)', async () => {
    const { leg, peer } = await suite.call();
    const file = path.join(suite.dir, 'limited.wav');
    const playing = peer.play('tone_stream://%(3000,0,440)');
    const rec = await leg.startRecord(file, { duration: 1 });
    const played = await leg.play('silence_stream://300');
    expect(played.playbackMilliseconds).to.be.within(200, 500);
    const r = await rec.done;
    await peer.stopPlayback();
    await playing.catch(() => undefined);
    expect(r.reason).to.equal('duration');
    expect(r.recordMilliseconds).to.be.within(800, 1300);
  });

  it('stopRecord while a long file plays ends the recording at once (uuid_record stop, not queued behind the file)', async () => {
    const { leg, peer } = await suite.call();
    const prompt = path.join(suite.dir, 'prompt.wav');
    const PROMPT_S = 15;
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', prompt, 'synth', String(PROMPT_S), 'sine', '440', 'vol', '0.5']);
    const file = path.join(suite.dir, 'under-prompt.wav');
    const rec = await leg.startRecord(file);
    const played = leg.play(prompt);
    await new Promise((r) => setTimeout(r, 1000)); // what is recorded: a second of the prompt playing
    const t0 = performance.now();
    await bounded(leg.stopRecord(file), 2000, 'stopRecord while the prompt plays');
    const r = await bounded(rec.done, 2000, "the recording's end while the prompt plays");
    expect(performance.now() - t0, 'the recording ended long before the prompt').to.be.below(2000);
    expect(r.reason).to.equal('stopped');
    expect(r.recordMilliseconds).to.be.within(800, 3000);
    const wav = readWav(file);
    expect((wav.samples.length / 8000) * 1000, "the file's length: up to the stop, not the prompt's end").to.be.within(800, 3000);
    await leg.stopPlayback();
    const p = await played;
    expect(p.interrupted, 'the prompt played on until stopPlayback').to.equal(true);
    await peer.stopPlayback().catch(() => undefined);
  });
});
