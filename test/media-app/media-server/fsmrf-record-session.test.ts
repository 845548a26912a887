// startRecord / stopRecord on the fsmrf backend (media-app/media-server/fsmrf/record-session.ts: the
// switch's record_session and stop_record_session) against our event socket (test/esl/rig.ts, all real
// on loopback): what the far end sends is in the file from the start until the stop, or until the limit;
// `done` settles with the switch's RECORD_STOP and the record_* length.
import { expect } from 'chai';
import path from 'node:path';
import { readWav } from '../../../testkit/media-engine/support';
import { toneShare } from '../../../testkit/media-engine/far-end';
import { useFsmrfSuite } from './fsmrf-suite';

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
});
