// A conference recording's `duration` on the fsmrf backend (media-app/media-server/fsmrf/conference.ts,
// FsmrfMix.startRecording): a timer of the recording, armed once the switch started it, on the backend's
// timers (here virtual ones: it fires when the test moves time on, so no window depends on the machine's
// load). Against our switch (testkit/esl/switch-rig.ts, real on loopback): the recording stops itself at its
// duration and not before (the switch closes the WAV), a recording stopped earlier takes its timer with
// it (a later recording runs its own full length), and a room that ends first clears it.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { EslServerOptions } from '../../esl/server';
import type { FsmrfMix } from '../../media-app/media-server/fsmrf/conference';
import { boundedOnce, bounded } from '../../testkit/bounded';
import { until } from '../../testkit/media-app/harness';
import { readWav, tmpDir } from '../../testkit/media-engine/support';
import { useFsmrfSuite } from '../../testkit/esl/fsmrf-suite';
import { watchedTimers } from '../support/virtual-timers';

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
  // the backend's timers: virtual ones that say when one is armed ('set', with its delay)
  const { clock, armings, timers } = watchedTimers();
  const suite = useFsmrfSuite({ rig: rigOpts, connect: { timers } });
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
  /** Starts a recording with `duration` s; resolves once its timer is armed (with that delay), with the recording's end. */
  async function recording(mix: FsmrfMix, file: string, duration: number): Promise<{ done: Promise<void> }> {
    const set = boundedOnce(armings, 'set', 10_000, `the ${duration} s duration timer armed`);
    const done = mix.startRecording(file, { duration });
    done.catch(() => undefined);
    expect((await set)[0], 'its delay').to.equal(duration * 1000);
    return { done };
  }
  it('stops itself at its duration and not before: the switch closes the WAV, no timer is left, the room may record again', async () => {
    const mix = await room();
    const file = path.join(dir, 'by-duration.wav');
    const { done } = await recording(mix, file, 0.5);
    // the switch has written audio (the stop would otherwise come before its first frame: a WAV of nothing)
    await until(() => fs.existsSync(file) && fs.statSync(file).size > 44 + 320, 10_000, 'the switch writing the recording');
    clock.advance(499);
    expect(clock.pending(), 'not due yet').to.equal(1);
    clock.advance(1);
    await bounded(done, 10_000, 'the recording stopped by its duration');
    expect(clock.pending(), 'nothing left armed').to.equal(0);
    expect(readWav(file).samples.length, 'a WAV the switch closed').to.be.greaterThan(0);
    const again = path.join(dir, 'again.wav');
    const second = mix.startRecording(again);
    await mix.stopRecording();
    await second;
    expect(fs.existsSync(again)).to.equal(true);
  });

  it('stopped before its duration: its timer goes with it, a later recording runs its own full length', async () => {
    const mix = await room();
    const first = await recording(mix, path.join(dir, 'early.wav'), 0.5);
    await mix.stopRecording();
    await first.done;
    expect(clock.pending(), "the first recording's timer cleared").to.equal(0);
    const later = await recording(mix, path.join(dir, 'later.wav'), 1.2);
    // past where the first would have fired: the later one is still armed, its own timer only
    clock.advance(600);
    expect(clock.pending(), "the later recording's timer").to.equal(1);
    clock.advance(599);
    expect(clock.pending(), 'not due before its 1.2 s').to.equal(1);
    clock.advance(1);
    await bounded(later.done, 10_000, 'the later recording stopped at its own 1.2 s');
    expect(clock.pending()).to.equal(0);
  });

  it('a room that ends before the duration: the recording ends with it, its timer cleared', async () => {
    const mix = await room();
    const { done } = await recording(mix, path.join(dir, 'room-ends.wav'), 5);
    await mix.destroy();
    await bounded(done, 10_000, 'the recording ended with the room');
    // the control leg's end keeps its deadline for the dialog until the switch's BYE (fsmrf/leg-end.ts): then nothing
    await until(() => clock.pending() === 0, 5000, 'nothing left to fire once the BYE came');
  });
});
