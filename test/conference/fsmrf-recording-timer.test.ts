// A conference recording's `duration` on the fsmrf backend (media-app/media-server/fsmrf/conference.ts,
// FsmrfMix.startRecording): a timer of the recording, armed once the switch started it. Tested past it
// against our switch (test/esl/rig.ts, real on loopback): the recording stops itself at its duration
// (the switch closes the WAV), a recording stopped earlier takes its timer with it (a later recording
// runs its own full length), and a room that ends first clears it (nothing left to fire).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { EslServerOptions } from '../../esl/server';
import type { FsmrfMix } from '../../media-app/media-server/fsmrf/conference';
import { readWav, tmpDir } from '../../testkit/media-engine/support';
import { useFsmrfSuite } from '../media-app/media-server/fsmrf-suite';

/** The mix's recording as it holds it (private; read by the test only): its duration timer. */
const recordingOf = (mix: FsmrfMix) => (mix as unknown as { recording: { timer: NodeJS.Timeout | null } | null }).recording;

/**
 * Resolves once the recording's timer is armed, and gives it: the timer is armed when the start's reply
 * is read, which is before a later command's reply on the same control leg (a `recording check`).
 */
async function armed(mix: FsmrfMix): Promise<NodeJS.Timeout> {
  await (mix as unknown as { command(args: string, ok: RegExp): Promise<void> }).command('recording check', /./);
  const timer = recordingOf(mix)?.timer;
  expect(timer, 'the duration timer armed').to.be.an('object');
  return timer!;
}

describe('fsmrf conference recording: the duration timer', function () {
  this.timeout(30_000);
  const rigOpts: Partial<EslServerOptions> = {};
  let dir = '';
  before(() => {
    // the switch writes the recordings here (ESL_RECORDINGS_DIR)
    dir = fs.realpathSync(tmpDir());
    rigOpts.conferenceFiles = { recordings: dir, sounds: dir };
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const suite = useFsmrfSuite({ rig: rigOpts });
  const rooms: FsmrfMix[] = [];
  let seq = 0;
  afterEach(async () => {
    for (const r of rooms.splice(0)) await r.destroy().catch(() => undefined);
  });
  async function room(): Promise<FsmrfMix> {
    const mix = await suite.backend.createMix(`rectimer${process.pid}x${++seq}`);
    rooms.push(mix);
    return mix;
  }
  const secondsIn = (file: string) => {
    const w = readWav(file);
    return w.samples.length / w.rate;
  };

  it('stops itself at its duration: the switch closes the WAV, the room may record again', async () => {
    const mix = await room();
    const file = path.join(dir, 'by-duration.wav');
    const t0 = Date.now();
    await mix.startRecording(file, { duration: 0.5 });
    expect(Date.now() - t0, 'ended at its duration').to.be.within(500, 2000);
    expect(recordingOf(mix)).to.equal(null);
    expect(secondsIn(file), "the WAV's length").to.be.within(0.3, 1.5);
    const again = path.join(dir, 'again.wav');
    const second = mix.startRecording(again);
    await mix.stopRecording();
    await second;
    expect(fs.existsSync(again)).to.equal(true);
  });

  it('stopped before its duration: its timer goes with it, a later recording runs its own full length', async () => {
    const mix = await room();
    const first = mix.startRecording(path.join(dir, 'early.wav'), { duration: 0.5 });
    await armed(mix);
    await mix.stopRecording();
    await first;
    const t0 = Date.now();
    // had the first timer stayed, it would stop this one 0.5 s after the first began
    await mix.startRecording(path.join(dir, 'later.wav'), { duration: 1.2 });
    expect(Date.now() - t0, 'the later recording ran its own 1.2 s').to.be.within(1200, 3000);
  });

  it('a room that ends before the duration: the recording ends with it, its timer cleared', async () => {
    const mix = await room();
    const file = path.join(dir, 'room-ends.wav');
    const done = mix.startRecording(file, { duration: 5 });
    const timer = await armed(mix);
    const t0 = Date.now();
    await mix.destroy();
    await done;
    expect(Date.now() - t0, 'ended with the room, not at its 5 s').to.be.below(2000);
    expect(recordingOf(mix)).to.equal(null);
    expect((timer as unknown as { _destroyed: boolean })._destroyed, "Node's Timeout: cleared (never fires)").to.equal(true);
  });
});
