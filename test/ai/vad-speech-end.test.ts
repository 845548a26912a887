// Where the Silero VAD dates the end of the caller's speech (media-app/ai/vad/speech-end.ts): the turn's
// wait (min_endpointing_delay_ms, `end_of_turn_wait_ms`) counts from it. The model judges 32 ms windows
// and its verdict trails the voice: the end of its last voiced window moved 46-110 ms with where the
// windows fell. Each phrase is written at 17 phases of the windows (2 ms apart, a whole window), with a
// line noise under it; the date must be within 10 ms of the voice's end (espeak's audio trimmed at
// |x| < 300, as the bench's phone counts its end) at every phase.
import { expect } from 'chai';
import { SileroVad } from '../../media-app/ai/vad/silero';
import { speechSamples } from '../../testkit/ai/echo-phone';

const FRAME = 160;

/** The dated end minus the voice's end, ms, for `speech` after `lead` samples (and `noise` RMS of line noise). */
async function datedEnd(speech: Int16Array, lead: number, noise: number): Promise<{ dated: number; model: number } | null> {
  const v = await SileroVad.open({ rate: 8000, startMs: 200, stopMs: 100 });
  const stops: number[] = [];
  v.on('speech', (e) => e.state === 'stop' && stops.push(e.offsetMs));
  const x = new Int16Array(lead + speech.length + 8000);
  x.set(speech, lead);
  let seed = lead + 1;
  // a deterministic white noise of about `noise` RMS
  for (let i = 0; i < x.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    x[i] = x[i]! + Math.round(((seed / 0x7fffffff) * 2 - 1) * noise * Math.sqrt(3));
  }
  for (let o = 0; o + FRAME <= x.length; o += FRAME) v.write(x.slice(o, o + FRAME));
  const t0 = Date.now();
  // the verdicts come from the model's thread
  while (Date.now() - t0 < 5000 && (!stops.length || stops.at(-1)! < (lead + speech.length) / 8)) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100));
  v.close();
  const stop = stops.at(-1);
  if (stop === undefined) return null;
  const end = (lead + speech.length) / 8;
  return { dated: v.speechEndOf(stop) - end, model: stop - v.stopWaitMs - end };
}

describe('Silero VAD: the end of speech', function () {
  this.timeout(120_000);

  for (const [text, noise] of [
    ['Tell me a story.', 4],
    ['What time is it.', 4],
    ['Wait.', 4],
    ['okay', 4],
    ['right', 4],
    ['Tell me a story.', 60],
  ] as const) {
    it(`"${text}" with line noise of RMS ${noise}: dated within 10 ms of the voice's end at every phase of the model's windows`, async () => {
      const speech = speechSamples(text);
      const got: { dated: number; model: number }[] = [];
      for (let lead = 800; lead <= 800 + 256; lead += 16) {
        const r = await datedEnd(speech, lead, noise);
        expect(r, `a stop at lead ${lead}`).to.not.equal(null);
        got.push(r!);
      }
      const dated = got.map((g) => Math.round(g.dated));
      const detail = JSON.stringify({ dated, model: got.map((g) => Math.round(g.model)) });
      expect(Math.min(...dated), detail).to.be.at.least(-10);
      expect(Math.max(...dated), detail).to.be.at.most(10);
    });
  }
});
