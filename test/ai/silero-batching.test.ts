// The Silero VAD thread under many calls (docs/ai.md "Turn-taking", "Benchmarks"): every voice session
// of media-app shares one thread and one ONNX session, and calls' windows are meant to go through the
// model together, one run per window period for all of them. 30 sessions are fed as media-app feeds them
// (each 20 ms tick, every call's frame in one turn of the event loop, the calls' windows out of phase
// as calls that started at different times), in real time: the model must run in batches (at least 10
// windows a run on average; one run per window per call is what 100 calls cannot afford on 2 cores),
// and each session must still hear its own speech exactly as a session alone does.
import { expect } from 'chai';
import { SileroVad, sileroStats } from '../../media-app/ai/vad/silero';
import { isFromSilero, isToSilero } from '../../media-app/ai/vad/silero-protocol';
import { speechSamples } from '../../testkit/ai/echo-phone';
import type { SpeechEvent } from '../../media-engine';

const FRAME = 160;
const SESSIONS = 30;

/** `lead` samples of silence, the speech, then a second of silence, in 20 ms frames. */
function frames(speech: Int16Array, lead: number): Int16Array[] {
  const x = new Int16Array(lead + speech.length + 8000);
  x.set(speech, lead);
  const out: Int16Array[] = [];
  for (let o = 0; o + FRAME <= x.length; o += FRAME) out.push(x.slice(o, o + FRAME));
  return out;
}

/** Busy for `ms` (the rest of a call's per-frame work on media-app's main thread). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * Writes each session's frames one tick (20 ms) at a time, every session's frame of a tick in the same
 * turn of the event loop (the media worker's `forks` message), with `workMs` of other work for each
 * call between them (its echo guard, its recogniser's socket: about 0.1 ms a call in media-app's profile at 100 calls).
 */
async function feed(vads: SileroVad[], audio: Int16Array[][], workMs = 0): Promise<void> {
  const ticks = Math.max(...audio.map((a) => a.length));
  for (let t = 0; t < ticks; t++) {
    vads.forEach((v, i) => {
      const f = audio[i]![t];
      if (f) v.write(f);
      busy(workMs);
    });
    await new Promise((r) => setTimeout(r, 20));
  }
  // the last windows' verdicts
  await new Promise((r) => setTimeout(r, 300));
}

function record(v: SileroVad): SpeechEvent[] {
  const events: SpeechEvent[] = [];
  v.on('speech', (e) => events.push(e));
  return events;
}

describe('Silero VAD thread with many calls', function () {
  this.timeout(60_000);
  const speech = speechSamples('Tell me a story.');

  it('runs 30 calls’ windows in batches, each call hearing its own speech as alone', async () => {
    // one session alone: the reference
    const alone = await SileroVad.open({ rate: 8000, startMs: 200, stopMs: 400 });
    const ref = record(alone);
    await feed([alone], [frames(speech, 0)]);
    alone.close();
    expect(ref.map((e) => e.state)).to.deep.equal(['start', 'stop']);

    const before = sileroStats();
    const vads = await Promise.all(Array.from({ length: SESSIONS }, () => SileroVad.open({ rate: 8000, startMs: 200, stopMs: 400 })));
    const events = vads.map(record);
    // session i's audio starts i · 50 samples late: its windows end at other ticks than its neighbours'
    const leads = vads.map((_, i) => i * 50);
    await feed(
      vads,
      leads.map((l) => frames(speech, l)),
      0.1,
    );
    vads.forEach((v) => v.close());
    const after = sileroStats();
    const runs = after.runs - before.runs;
    const windows = after.windows - before.windows;
    const perCall = Math.floor((speech.length + 8000) / 256);
    const gated = after.gated - before.gated;
    expect(windows + gated, 'every window of every call was decided').to.be.at.least(SESSIONS * perCall);
    expect(windows / runs, `windows per model run (${windows} windows in ${runs} runs)`).to.be.at.least(10);
    events.forEach((ev, i) => {
      expect(
        ev.map((e) => e.state),
        `session ${i}`,
      ).to.deep.equal(['start', 'stop']);
      // the same verdicts as alone, shifted by its lead (within one window)
      ev.forEach((e, k) => expect(Math.abs(e.offsetMs - (ref[k]!.offsetMs + leads[i]! / 8)), `session ${i} ${e.state}`).to.be.at.most(32));
    });
  });

  it('spends no model run on a quiet line, and hears speech after it as with the model on every window', async () => {
    // a second of digital silence, a second of line noise at -65 dBFS, then speech over that noise
    const noise = (n: number) => Int16Array.from({ length: n }, () => Math.round((Math.random() * 2 - 1) * 32768 * 10 ** (-65 / 20) * Math.sqrt(3)));
    const line = new Int16Array(16000 + speech.length + 8000);
    line.set(noise(line.length - 8000), 8000);
    for (let i = 0; i < speech.length; i++) line[16000 + i] = Math.max(-32768, Math.min(32767, line[16000 + i]! + speech[i]!));
    const cut = (x: Int16Array) => Array.from({ length: Math.floor(x.length / FRAME) }, (_, k) => x.slice(k * FRAME, (k + 1) * FRAME));
    const quietEnd = Math.floor(16000 / 256);

    const ungated = await SileroVad.open({ rate: 8000, startMs: 200, stopMs: 400, quietDbfs: null });
    const ref = record(ungated);
    const before = sileroStats();
    await feed([ungated], [cut(line.subarray(0, 16000))]);
    expect(sileroStats().windows - before.windows, 'without the gate, the quiet line goes through the model').to.be.at.least(quietEnd - 1);
    await feed([ungated], [cut(line.subarray(16000))]);
    ungated.close();

    const gated = await SileroVad.open({ rate: 8000, startMs: 200, stopMs: 400 });
    const ev = record(gated);
    const quiet = sileroStats();
    await feed([gated], [cut(line.subarray(0, 16000))]);
    const afterQuiet = sileroStats();
    expect(afterQuiet.windows - quiet.windows, 'model windows on 2 s of a quiet line').to.equal(0);
    expect(afterQuiet.gated - quiet.gated, 'quiet windows decided without the model').to.be.at.least(quietEnd - 1);
    await feed([gated], [cut(line.subarray(16000))]);
    gated.close();
    expect(sileroStats().windows - afterQuiet.windows, 'the speech went through the model').to.be.greaterThan(10);

    expect(ref.map((e) => e.state)).to.deep.equal(['start', 'stop']);
    expect(ev.map((e) => e.state)).to.deep.equal(['start', 'stop']);
    ev.forEach((e, k) => expect(Math.abs(e.offsetMs - ref[k]!.offsetMs), e.state).to.be.at.most(32));
  });

  it('takes only well-formed batches across the thread boundary', () => {
    const pcm = new Int16Array(320);
    expect(isToSilero({ t: 'audio', ids: [1, 2], sizes: [160, 160], pcm })).to.equal(true);
    // sizes that do not add up to the samples, a negative or fractional size, ids and sizes of other lengths
    expect(isToSilero({ t: 'audio', ids: [1, 2], sizes: [160, 100], pcm })).to.equal(false);
    expect(isToSilero({ t: 'audio', ids: [1, 2], sizes: [480, -160], pcm })).to.equal(false);
    expect(isToSilero({ t: 'audio', ids: [1, 2], sizes: [160.5, 159.5], pcm })).to.equal(false);
    expect(isToSilero({ t: 'audio', ids: [1], sizes: [160, 160], pcm })).to.equal(false);
    expect(isToSilero({ t: 'audio', ids: ['1', 2], sizes: [160, 160], pcm })).to.equal(false);
    expect(isToSilero({ t: 'audio', ids: [1, 2], sizes: [160, 160], pcm: new Float32Array(320) })).to.equal(false);
    expect(isToSilero({ t: 'open', id: 1, rate: 8000, quiet: 0.001 })).to.equal(true);
    expect(isToSilero({ t: 'open', id: 1, rate: 8000, quiet: -1 })).to.equal(false);
    expect(isToSilero({ t: 'open', id: 1, rate: 8000, quiet: 'x' })).to.equal(false);
    expect(isFromSilero({ t: 'probs', ids: [1, 2], probs: new Float32Array(2), runs: 1, gated: 1 })).to.equal(true);
    expect(isFromSilero({ t: 'probs', ids: [1, 2], probs: new Float32Array(1), runs: 1, gated: 0 })).to.equal(false);
    expect(isFromSilero({ t: 'probs', ids: [1, 2], probs: new Float32Array(2), runs: 1, gated: 3 })).to.equal(false);
    expect(isFromSilero({ t: 'probs', ids: [1, 2], probs: new Float32Array(2), runs: 2, gated: 0 })).to.equal(false);
  });
});
