import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { alawToLinear, isEngineFormat, parseWavHeader, peaksOf, readWav, readWavInfo, ulawToLinear, WavError, WavWriter, writeWav } from '../../../media-engine/audio/wav';
import { concat, silenceMs, soxSynth } from '../../../testkit/media-engine/audio';

describe('media-engine/audio WAV', function () {
  this.timeout(30000);
  let dir: string;
  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wav-test-'))));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const sox = (args: string[]) => execFileSync('sox', args);

  it('reads formats sox writes: PCM 8/16/24-bit, µ-law, A-law, float, stereo, 44.1 kHz', () => {
    const src = path.join(dir, 'src.wav');
    sox(['-n', '-r', '8000', '-b', '16', '-c', '1', src, 'synth', '0.5', 'sine', '440', 'vol', '0.5']);
    const ref = readWav(src).samples;
    const cases: Array<[string[], Partial<Record<string, unknown>>, number]> = [
      [['-e', 'mu-law', '-b', '8'], { encoding: 'mulaw', bitsPerSample: 8 }, 520],
      [['-e', 'a-law', '-b', '8'], { encoding: 'alaw', bitsPerSample: 8 }, 520],
      [['-e', 'unsigned-integer', '-b', '8'], { encoding: 'pcm', bitsPerSample: 8 }, 400],
      [['-b', '24'], { encoding: 'pcm', bitsPerSample: 24 }, 2],
      [['-e', 'floating-point', '-b', '32'], { encoding: 'float', bitsPerSample: 32 }, 2],
    ];
    for (const [args, fmt, tol] of cases) {
      const f = path.join(dir, `c${args.join('')}.wav`);
      sox(['-D', src, ...args, f]); // -D: no dither, so the error is pure quantisation
      const { info, samples } = readWav(f);
      expect(info.format).to.include({ sampleRate: 8000, channels: 1, ...fmt });
      expect(info.frames).to.equal(4000);
      let maxErr = 0;
      for (let i = 0; i < ref.length; i++) maxErr = Math.max(maxErr, Math.abs(samples[i] - ref[i]));
      expect(maxErr, args.join(' ')).to.be.at.most(tol);
    }
    const st = path.join(dir, 'st.wav');
    sox([src, '-r', '44100', '-c', '2', st]);
    const info = readWavInfo(st);
    expect(info.format).to.include({ sampleRate: 44100, channels: 2, bitsPerSample: 16 });
    expect(info.durationMs).to.be.closeTo(500, 1);
    expect(isEngineFormat(info.format)).to.equal(false);
    expect(isEngineFormat(readWavInfo(src).format)).to.equal(true);
  });

  it('reads WAVE_FORMAT_EXTENSIBLE (4 channels, 24-bit) by its subformat', () => {
    const f = path.join(dir, 'ext.wav');
    sox(['-n', '-r', '16000', '-b', '24', '-c', '4', f, 'synth', '0.25', 'sine', '300']);
    expect(fs.readFileSync(f).readUInt16LE(20)).to.equal(0xfffe); // sox wrote the extensible form
    const { info, samples } = readWav(f);
    expect(info.format).to.include({ encoding: 'pcm', formatTag: 1, channels: 4, bitsPerSample: 24, sampleRate: 16000 });
    expect(info.frames).to.equal(4000);
    expect(samples.length).to.equal(16000);
  });

  it('G.711 decoders match the reference values', () => {
    expect(ulawToLinear(0xff)).to.equal(0);
    expect(ulawToLinear(0x00)).to.equal(-32124);
    expect(ulawToLinear(0x80)).to.equal(32124);
    expect(alawToLinear(0xd5)).to.equal(8);
    expect(alawToLinear(0x55)).to.equal(-8);
    expect(alawToLinear(0xaa)).to.equal(32256);
  });

  it('rejects what is not a WAV, or a WAV it cannot decode, with a clear error', () => {
    expect(() => parseWavHeader(Buffer.from('ID3 not a wave file at all'))).to.throw(WavError, /not a WAV/);
    const gsm = path.join(dir, 'gsm.wav');
    sox(['-n', '-r', '8000', '-c', '1', '-e', 'gsm-full-rate', gsm, 'synth', '0.2', 'sine', '440']);
    expect(() => readWavInfo(gsm)).to.throw(WavError, /unsupported WAV format tag 49/);
    const truncated = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1');
    expect(() => parseWavHeader(truncated)).to.throw(WavError);
  });

  it('the writer streams 8 kHz 16-bit mono that sox reads back identically, with duration and peaks', () => {
    const f = path.join(dir, 'rec.wav');
    const w = new WavWriter(f, { flushIntervalMs: 200 });
    const audio = concat(silenceMs(1000), soxSynth(['1', 'sine', '500'], ['vol', '0.5']), silenceMs(1000));
    for (let i = 0; i < audio.length; i += 160) w.write(audio.subarray(i, i + 160));
    const sum = w.close(3);
    expect(sum.durationMs).to.equal(3000);
    expect(sum.peaks).to.have.length(3);
    expect(sum.peaks[0]).to.equal(0);
    expect(sum.peaks[1]).to.be.closeTo(0.5, 0.02);
    expect(sum.peaks[2]).to.equal(0);
    expect(execFileSync('soxi', ['-D', f]).toString().trim()).to.equal('3.000000');
    expect(Array.from(readWav(f).samples)).to.deep.equal(Array.from(audio));
    expect(peaksOf(audio, 3)).to.deep.equal(sum.peaks);
    expect(() => w.write(audio.subarray(0, 160))).to.throw(/after close/);
  });

  it('a recording killed mid-write is still a valid WAV with the flushed audio', async () => {
    const f = path.join(dir, 'killed.wav');
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'support', 'wav-writer-child.ts'), f], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
    });
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const info = readWavInfo(f);
    const declared = fs.readFileSync(f).readUInt32LE(40);
    expect(declared).to.equal(info.dataBytes); // header says exactly what is on disk
    expect(info.durationMs).to.be.at.least(1000);
    const { samples } = readWav(f);
    for (let i = 0; i < samples.length; i++) if (samples[i] !== (i % 2000) - 1000) throw new Error(`sample ${i} differs`);
    expect(execFileSync('soxi', ['-s', f]).toString().trim()).to.equal(String(samples.length));
  });

  it('writeWav writes a whole file in one go', () => {
    const f = path.join(dir, 'whole.wav');
    writeWav(f, Int16Array.from([1, -2, 3]));
    expect(Array.from(readWav(f).samples)).to.deep.equal([1, -2, 3]);
  });
});
