import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { Recorder } from '../../media-engine/recorder';
import { readWav } from '../../media-engine/audio/wav';

/** The recorder mixes both directions straight into its WAV buffer: what the file and the stop rules see. */
describe('media-engine recorder mix', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rec-mix-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const ramp = (from: number, step: number, n = 160) => Int16Array.from({ length: n }, (_, i) => from + i * step);

  it('writes in + out clipped, either side alone, and silence for neither; sox agrees on the length', async () => {
    const file = path.join(dir, 'mix.wav');
    const r = new Recorder(file, { separate: true });
    const a = ramp(-16000, 200); // -16000 .. 15800
    const b = new Int16Array(160).fill(20000);
    r.write(a, b);
    r.write(a, null);
    r.write(null, b);
    r.write(null, null);
    r.stop('stopped');
    const res = await r.result;
    const { info, samples } = readWav(file);
    expect(info.format.sampleRate).to.equal(8000);
    expect(samples.length).to.equal(640);
    const clip = (x: number) => Math.max(-32768, Math.min(32767, x));
    expect(Array.from(samples.subarray(0, 160))).to.deep.equal(Array.from(a, (x) => clip(x + 20000)));
    expect(Array.from(samples.subarray(160, 320))).to.deep.equal(Array.from(a));
    expect(Array.from(samples.subarray(320, 480))).to.deep.equal(Array.from(b));
    expect(Array.from(new Set(samples.subarray(480)))).to.deep.equal([0]);
    expect(Array.from(readWav(path.join(dir, 'mix-in.wav')).samples.subarray(0, 160))).to.deep.equal(Array.from(a));
    // peaks per 100 ms: the clipped maximum is in the first bucket
    expect(res.files[0].peaks[0]).to.equal(Math.round((32767 / 32768) * 1000) / 1000);
    expect(execFileSync('sox', ['--i', '-s', file], { encoding: 'utf8' }).trim()).to.equal('640'); // sox agrees on the length
  });

  it('end_of_silence counts the caller side only: loud output does not keep a silent caller recording', async () => {
    const r = new Recorder(path.join(dir, 'eos.wav'), { end_of_silence: 1 });
    const quiet = new Int16Array(160).fill(50);
    const loud = new Int16Array(160).fill(20000);
    for (let i = 0; i < 49; i++) r.write(quiet, loud);
    expect(r.finished).to.equal(false);
    r.write(quiet, loud);
    expect((await r.result).reason).to.equal('end_of_silence');
    // a caller above the threshold resets the count, with or without output
    const r2 = new Recorder(path.join(dir, 'eos2.wav'), { end_of_silence: 1 });
    for (let i = 0; i < 49; i++) r2.write(null, loud);
    r2.write(new Int16Array(160).fill(-300), null);
    for (let i = 0; i < 49; i++) r2.write(quiet, null);
    expect(r2.finished).to.equal(false);
    r2.stop('stopped');
  });
});
