// startRecord / stopRecord on the fsmrf backend (media-app/media-server/fsmrf/record-session.ts: the
// switch's record_session and stop_record_session) against our event socket (test/esl/rig.ts, all real
// on loopback): what the far end sends is in the file from the start until the stop, or until the limit;
// `done` settles with the switch's RECORD_STOP and the record_* length.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { Endpoint } from '../../../media-engine';
import { FsmrfBackend, type FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';
import { readWav, tmpDir } from '../../../testkit/media-engine/support';
import { toneShare } from '../../../testkit/media-engine/far-end';
import { startFsmrfRig, type FsmrfRig } from '../../esl/rig';
import { PASSWORD } from '../../esl/support';

describe('media-app fsmrf backend: startRecord (record_session)', function () {
  this.timeout(30_000);
  let rig: FsmrfRig;
  let backend: FsmrfBackend;
  let dir: string;
  const open: { leg: FsmrfCallEndpoint; peer: Endpoint }[] = [];

  before(async () => {
    rig = await startFsmrfRig();
    backend = await FsmrfBackend.connect(rig.appSrf, { host: '127.0.0.1', port: rig.port, password: PASSWORD }, { connectTimeoutMs: 5000 });
    dir = tmpDir();
  });
  afterEach(async () => {
    for (const { leg, peer } of open.splice(0)) {
      await leg.destroy().catch(() => undefined);
      await peer.destroy().catch(() => undefined);
    }
  });
  after(async () => {
    backend?.close();
    await rig?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function call(): Promise<{ leg: FsmrfCallEndpoint; peer: Endpoint }> {
    const peer = await rig.engine.createEndpoint({});
    const leg = await backend.createEndpoint({ remoteSdp: peer.local.sdp });
    await peer.modify(leg.local.sdp);
    open.push({ leg, peer });
    return { leg, peer };
  }

  it('records until stopRecord: the file holds the far end, `done` reports stopped and its length', async () => {
    const { leg, peer } = await call();
    const file = path.join(dir, 'session.wav');
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
    const { leg, peer } = await call();
    const file = path.join(dir, 'limited.wav');
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
