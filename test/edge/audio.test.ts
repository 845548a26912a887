// The softphone-WAV measures the edge tests judge by (audio.ts), on WAVs sox makes: a share is a share
// (0..1 of the loudest second's energy), at either rate, so "> 0.5" means the tone is most of what was heard.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loudness, toneShare, toneWav } from './audio';

describe('edge audio measures (the WAV a softphone wrote)', () => {
  let dir: string;
  /** 1 kHz at 8 kHz */
  let tone8k: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edge-audio-'));
    tone8k = path.join(dir, 'tone.wav');
    toneWav(tone8k, 1000);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const rate of [8000, 16000])
    it(`a tone's share is about 1 at its frequency and about 0 at another (${rate} Hz)`, () => {
      const f = path.join(dir, `tone-${rate}.wav`);
      toneWav(f, 1000, rate);
      expect(toneShare(f, 1000)).to.be.within(0.95, 1.0001);
      expect(toneShare(f, 2000)).to.be.below(0.01);
    });

  it('two equal tones hold about half each; loudness is the mean |sample|', () => {
    const f = path.join(dir, 'two.wav');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', f, 'synth', '2', 'sine', '700', 'sine', '1300', 'remix', '-', 'vol', '0.4']);
    expect(toneShare(f, 700)).to.be.within(0.4, 0.6);
    expect(toneShare(f, 1300)).to.be.within(0.4, 0.6);
    // a sine at about 0.4 of full scale: mean |x| is 2/pi of its peak (about 8000)
    expect(loudness(tone8k)).to.be.within(7000, 9000);
  });

  it('a tone above the file’s Nyquist frequency has no share (a narrowband file cannot hold 6 kHz)', () => {
    expect(toneShare(tone8k, 6000)).to.equal(0);
  });
});
