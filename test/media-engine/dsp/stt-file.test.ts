// A whole recording through the recogniser (media-engine/stt/file.ts): fed as fast as it takes the
// audio and never faster. transcribeWavFile (a recording's summary) wrote 5 s of audio per 50 ms and
// pocketsphinx's stream dropped what passed its 10 s backlog: of an 81 s recording, 3455 of 4050
// frames were dropped (measured before the change). Real espeak-ng speech, real pocketsphinx.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { transcribeSamples, transcribeWavFile } from '../../../media-engine';
import { registerSttProvider, type SttStream } from '../../../media-engine/stt';
import { EventEmitter } from 'node:events';
import { writeWav } from '../../../media-engine/audio/wav';
import { espeakSamples } from '../../../testkit/speech/phrase-recogniser';

/** `n` times the sentence, a second of silence after each: 8 kHz samples. */
function repeated(n: number): Int16Array {
  const one = espeakSamples('hello there, I would like to check my balance please');
  const out = new Int16Array(n * (one.length + 8000));
  for (let i = 0; i < n; i++) out.set(one, i * (one.length + 8000));
  return out;
}

describe('media-engine/stt: a whole recording transcribed', function () {
  this.timeout(60_000);

  it('30 s of speech: no frame dropped, every sentence heard', async () => {
    const samples = repeated(8);
    expect(samples.length / 8000).to.be.above(25);
    const finals: string[] = [];
    const r = await transcribeSamples(samples, { language: 'en-US', onFinal: (t) => finals.push(t.text) });
    expect(r.droppedFrames, 'frames dropped').to.equal(0);
    // one utterance per sentence at least (pocketsphinx splits on the silences)
    expect(finals.length).to.be.at.least(8);
    expect(r.text).to.equal(finals.map((f) => f.trim()).join(' '));
  });

  it("transcribeWavFile reads the file the same way; a language the recogniser lacks rejects (the caller's fallback runs)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stt-file-'));
    try {
      const file = path.join(dir, 'r.wav');
      const samples = repeated(2);
      writeWav(file, samples);
      expect(await transcribeWavFile(file, 'en-US')).to.equal((await transcribeSamples(samples, { language: 'en-US' })).text);
      const err = await transcribeWavFile(file, 'xx-QQ').then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).to.match(/xx-QQ|language/i);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a recogniser that stops taking audio (its backlog stays full, no error) fails the transcription after the stall bound, not never', async () => {
    const aborted: string[] = [];
    registerSttProvider('test-stalled', () => ({
      name: 'test-stalled',
      createStream: () =>
        Object.assign(new EventEmitter(), {
          droppedFrames: 0,
          write: () => undefined,
          end: async () => undefined,
          abort: () => void aborted.push('aborted'),
          backlogShare: () => 1,
        }) as unknown as SttStream,
    }));
    const err = await transcribeSamples(new Int16Array(8000), { language: 'en-US', provider: 'test-stalled', stallMs: 200 }).then(
      () => null,
      (e: Error & { code?: string }) => e,
    );
    expect(err?.message).to.match(/took no audio for 200 ms/);
    expect(err?.code).to.equal('RECOGNIZER_FAILED');
    expect(aborted, 'the stream is let go').to.deep.equal(['aborted']);
  });
});
