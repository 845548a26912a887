// The worker-side player, frame by frame: back-to-back files and back-to-back play requests leave no
// silent frame between them, and a request resolves in the tick that sends its last frame.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Player, type PlayResult } from '../../media-engine/player';
import { FileFrameReader } from '../../media-engine/sources/file-reader';
import { FRAME_SAMPLES } from '../../media-engine/dsp/frame';
import { tmpDir } from '../../testkit/media-engine/support';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('media-engine player', () => {
  let dir: string;
  const tone = (name: string, frames: number, hz: number) => {
    const f = path.join(dir, name);
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', f, 'synth', String(frames * 0.02), 'sine', String(hz), 'vol', '0.5']);
    return () => Promise.resolve(new FileFrameReader(f));
  };
  before(() => (dir = tmpDir()));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Runs ticks like the worker: one frame each, letting loaders settle between ticks. */
  async function run(p: Player, ticks: number, onTick?: (i: number) => void): Promise<number[]> {
    const levels: number[] = [];
    const out = new Int16Array(FRAME_SAMPLES);
    for (let i = 0; i < ticks; i++) {
      await tick();
      onTick?.(i);
      if (!p.readFrame(out)) {
        levels.push(-1);
        continue;
      }
      let s = 0;
      for (const v of out) s += Math.abs(v);
      levels.push(s / FRAME_SAMPLES);
    }
    return levels;
  }

  it('plays the files of one request back to back, with no silent frame between them', async () => {
    const p = new Player();
    let done: PlayResult | null = null;
    void p.enqueue([tone('a.wav', 5, 500), tone('b.wav', 5, 700), tone('c.wav', 5, 900)]).then((r) => (done = r));
    const levels = await run(p, 20);
    const voiced = levels.map((l) => l > 1000);
    const first = voiced.indexOf(true);
    expect(voiced.slice(first, first + 15).every(Boolean), levels.map(Math.round).join(',')).to.equal(true);
    expect(levels[first + 15]).to.equal(-1); // nothing left to play
    expect(done).to.deep.include({ playbackMilliseconds: 300, interrupted: false });
  });

  it('resolves a request in the tick of its last frame, so the next request follows without a gap', async () => {
    const p = new Player();
    const load2 = tone('d.wav', 4, 600);
    const load1 = tone('e.wav', 4, 800);
    let resolvedAt = -1;
    let tickNo = 0;
    void p.enqueue([load1]).then(() => {
      resolvedAt = tickNo;
      // what a flow does when one play ends: the next play right away
      void p.enqueue([load2]);
    });
    const levels = await run(p, 14, (i) => (tickNo = i));
    const voiced = levels.map((l) => l > 1000);
    const first = voiced.indexOf(true);
    expect(resolvedAt, levels.map(Math.round).join(',')).to.equal(first + 3);
    // the second request loads within the following tick; at most one frame of silence between
    const second = voiced.indexOf(true, first + 4);
    expect(second - (first + 4), levels.map(Math.round).join(',')).to.be.at.most(1);
  });

  it('a source that fails to load rejects its request; the next request still plays', async () => {
    const p = new Player();
    const failed = p.enqueue([() => Promise.reject(new Error('no such prompt'))]).then(
      () => null,
      (e: Error) => e,
    );
    const ok = p.enqueue([tone('f.wav', 3, 500)]);
    const levels = await run(p, 8);
    const err = await failed;
    expect(err?.message).to.equal('no such prompt');
    expect((await ok).playbackMilliseconds).to.equal(60);
    expect(levels.filter((l) => l > 1000)).to.have.length(3);
  });
});
