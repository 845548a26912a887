// Both tracks of a simulated call (evals/call-audio.ts, docs/evals.md "Both tracks of a call"): what the
// phone sent and what it heard, placed sample by sample after the answer, capped, written as WAVs
// through the platform's object store. Slots and packets are given by hand with their times, so the
// placement is exact; test/evals/audio-live.test.ts keeps a real call's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { CallAudio, REANCHOR_MS, storeCallAudio } from '../../evals/call-audio';
import { LocalObjectStore } from '../../core/storage/local';
import { evalAudioKey } from '../../core/evals/audio';

const T0 = 5000;
/** The samples of a mono 16-bit WAV (after its 44-byte header, checked). */
function samplesOf(wav: Buffer): Int16Array {
  expect(wav.toString('ascii', 0, 4) + wav.toString('ascii', 8, 16)).to.equal('RIFFWAVEfmt ');
  expect([wav.readUInt16LE(20), wav.readUInt16LE(22), wav.readUInt32LE(24), wav.readUInt16LE(34)]).to.deep.equal([1, 1, 8000, 16]);
  expect(wav.readUInt32LE(40)).to.equal(wav.length - 44);
  const copy = Buffer.from(wav.subarray(44));
  return new Int16Array(copy.buffer, copy.byteOffset, copy.length / 2);
}
const filled = (n: number, v: number) => new Int16Array(n).fill(v);
/** Where a track is not silent: [first, last] sample index of each run of non-zero samples. */
function runs(s: Int16Array): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < s.length; i++) {
    if (!s[i]) continue;
    if (out.length && out.at(-1)![1] === i - 1) out.at(-1)![1] = i;
    else out.push([i, i]);
  }
  return out;
}

describe('evals: the two audio tracks of a call', () => {
  it('the sent track: each 20 ms slot where it was due after the answer, a digit as its two tones, silence elsewhere', () => {
    const a = new CallAudio(60_000);
    for (let k = 0; k < 30; k++) {
      const due = T0 + 3 + k * 20;
      if (k >= 5 && k < 10) a.onSent({ due, pcm: filled(160, 1000 + k) }, T0);
      else if (k >= 15 && k < 20) a.onSent({ due, digit: 1 }, T0);
      else a.onSent({ due, pcm: new Int16Array(160) }, T0);
    }
    const kept = a.finish(700);
    const s = samplesOf(kept.caller);
    expect(s.length).to.equal(5600);
    expect(kept).to.include({ duration_ms: 700, call_ms: 700, truncated: false });
    // slot k at 3 + 20k ms: sample 24 + 160k
    expect(s[24 + 5 * 160]).to.equal(1005);
    expect(s[24 + 10 * 160 - 1]).to.equal(1009);
    const tone = s.subarray(24 + 15 * 160, 24 + 20 * 160);
    expect(runs(s).map(([b]) => b)[0]).to.equal(24 + 5 * 160);
    expect(runs(s).at(-1)![1]).to.be.at.most(24 + 20 * 160 - 1);
    // 697 + 1209 Hz at a quarter of full scale each: its peak near half of full scale, its mean power that of two sines
    expect(Math.max(...tone)).to.be.within(14_000, 16_400);
    const power = tone.reduce((p, v) => p + v * v, 0) / tone.length;
    expect(Math.sqrt(power)).to.be.within(0.25 * 32767 * 0.95, 0.25 * 32767 * 1.05);
    expect(samplesOf(kept.agent).every((v) => v === 0)).to.equal(true);
  });

  it(
    "the heard track: packets placed by their RTP timestamps from the first one's arrival, re-anchored when arrival and timestamp part by more than " + REANCHOR_MS + ' ms or the SSRC changes',
    () => {
      const a = new CallAudio(60_000);
      // 10 packets from 100 ms, arriving up to 7 ms late: laid end to end by timestamp from the first arrival
      for (let k = 0; k < 10; k++) a.onHeard({ at: T0 + 100 + k * 20 + (k % 3) * 3.5, pcm: filled(160, 100 + k), ts: (0xffffff00 + k * 160) >>> 0, ssrc: 7 }, T0);
      // the same stream 500 ms on by arrival but only 20 ms on by timestamp: placed at its arrival
      a.onHeard({ at: T0 + 800, pcm: filled(160, 300), ts: (0xffffff00 + 10 * 160) >>> 0, ssrc: 7 }, T0);
      a.onHeard({ at: T0 + 822, pcm: filled(160, 301), ts: (0xffffff00 + 11 * 160) >>> 0, ssrc: 7 }, T0);
      // a new SSRC: placed at its arrival
      a.onHeard({ at: T0 + 1000.4, pcm: filled(160, 400), ts: 12345, ssrc: 8 }, T0);
      const kept = a.finish(1200);
      const s = samplesOf(kept.agent);
      expect(runs(s)).to.deep.equal([
        [800, 800 + 10 * 160 - 1],
        [6400, 6400 + 2 * 160 - 1],
        [8003, 8003 + 159],
      ]);
      for (let k = 0; k < 10; k++) expect(s[800 + k * 160]).to.equal(100 + k);
      expect([s[6400], s[6560]]).to.deep.equal([300, 301]);
      expect(s[8003]).to.equal(400);
    },
  );

  it('a call longer than the cap keeps its first seconds and says so; both files under the run in the object store', async () => {
    const a = new CallAudio(1000);
    for (let k = 0; k < 150; k++) {
      a.onSent({ due: T0 + k * 20, pcm: filled(160, 1) }, T0);
      a.onHeard({ at: T0 + 10 + k * 20, pcm: filled(160, 2), ts: k * 160, ssrc: 1 }, T0);
    }
    const kept = a.finish(3000);
    expect(kept).to.include({ duration_ms: 1000, call_ms: 3000, truncated: true });
    expect(samplesOf(kept.caller)).to.have.length(8000);
    expect(samplesOf(kept.agent)).to.have.length(8000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eval-audio-'));
    try {
      const store = new LocalObjectStore(dir);
      const audio = await storeCallAudio(store, { customerId: 'c1', runId: 'r1', sipCallId: 'abc@openvoice-evals' }, kept);
      expect(audio).to.include({ format: 'wav', sample_rate: 8000, duration_ms: 1000, call_ms: 3000, truncated: true });
      expect(audio.note).to.equal('the call lasted 3.0 s: its first 1 s are kept (EVALS_AUDIO_MAX_S)');
      expect(audio.caller_url).to.match(/^\/v1\.0\/eval_runs\/r1\/audio\/[0-9a-f]{32}-caller\.wav$/);
      expect(audio.agent_url).to.equal(audio.caller_url.replace('-caller', '-agent'));
      const file = audio.caller_url.split('/').at(-1)!;
      expect(fs.readFileSync(path.join(dir, evalAudioKey('c1', 'r1', file)))).to.deep.equal(kept.caller);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
