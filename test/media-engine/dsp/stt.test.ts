import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readWav } from '../../../media-engine/audio/wav';
import { EspeakProvider, FliteProvider, fliteAvailable } from '../../../media-engine/tts';
import { PocketsphinxProvider, phrasesToJsgf, SttError, Upsampler2x, createSttProvider, type TranscriptEvent, type SttStream } from '../../../media-engine/stt';
import { Resampler } from '../../../media-engine/codecs';
import { concat, forEachFrame, silenceMs } from '../../../testkit/media-engine/audio';

/** An utterance by flite when installed (pocketsphinx does much better on it), else espeak-ng. */
async function say(text: string): Promise<Int16Array> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stt-say-'));
  try {
    const tts = fliteAvailable() ? new FliteProvider({ outDir: dir, voice: 'slt' }) : new EspeakProvider({ outDir: dir });
    return readWav((await tts.synthesize(text)).path).samples;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function transcribe(stream: SttStream, audio: Int16Array): Promise<TranscriptEvent[]> {
  const events: TranscriptEvent[] = [];
  stream.on('transcript', (e: TranscriptEvent) => events.push(e));
  forEachFrame(audio, (f) => stream.write(f));
  await stream.end();
  return events;
}

describe('media-engine/stt pocketsphinx', function () {
  this.timeout(90000);
  const phrases = ['please transfer me to sales', 'talk to an operator', 'check my balance', 'yes', 'no', 'goodbye'];

  it('with a phrase list, a spoken phrase comes back as that phrase, with its offset and direction', async function () {
    // pocketsphinx recognises flite's voice reliably and espeak-ng's poorly (docs/speech.md).
    if (!fliteAvailable()) this.skip();
    const stt = createSttProvider('pocketsphinx');
    const audio = concat(silenceMs(700), await say('please transfer me to sales'), silenceMs(800));
    const events = await transcribe(stt.createStream({ phrases, direction: 'outbound' }), audio);
    expect(events.length).to.be.at.least(1);
    expect(events[0]).to.include({ text: 'please transfer me to sales', final: true, direction: 'outbound' });
    expect(events[0].offsetMs).to.be.within(400, 1200);
    expect(events[0].durationMs).to.be.greaterThan(500);
  });

  it('16 kHz audio (a wideband leg) goes to the recogniser as it is: the phrase, at the same offset', async function () {
    if (!fliteAvailable()) this.skip();
    const narrow = concat(silenceMs(700), await say('please transfer me to sales'), silenceMs(800));
    const r = new Resampler(8000, 16000);
    const wide = new Int16Array(narrow.length * 2 + 320);
    const n = r.process(narrow, wide, narrow.length - (narrow.length % 160));
    r.close();
    const stream = createSttProvider('pocketsphinx').createStream({ phrases, sampleRate: 16000 });
    const events: TranscriptEvent[] = [];
    stream.on('transcript', (e: TranscriptEvent) => events.push(e));
    const frame = new Int16Array(320);
    for (let i = 0; i + 320 <= n; i += 320) {
      frame.set(wide.subarray(i, i + 320));
      stream.write(frame);
    }
    await stream.end();
    expect(events.length).to.be.at.least(1);
    expect(events[0]).to.include({ text: 'please transfer me to sales', final: true });
    // upsampled a second time, the speech would last twice as long and start at twice the offset
    expect(events[0].offsetMs).to.be.within(400, 1200);
    expect(events[0].durationMs).to.be.within(500, (narrow.length - 1500 * 8) / 8 + 600);
    // a rate the recogniser cannot be told (JavaScript callers are not type-checked)
    const bad = JSON.parse('{"sampleRate": 44100}') as { sampleRate: 16000 };
    expect(() => createSttProvider('pocketsphinx').createStream(bad)).to.throw(SttError, /sample rate/);
  });

  it('free-form gives non-empty transcripts, one per utterance, with increasing offsets (accuracy is poor)', async () => {
    const a = await say('I would like to check my account balance please');
    const audio = concat(silenceMs(300), a, silenceMs(1500), a, silenceMs(500));
    const events = await transcribe(new PocketsphinxProvider().createStream({ language: 'en-US' }), audio);
    const nonEmpty = events.filter((e) => e.text.trim().length > 0);
    expect(nonEmpty.length).to.be.at.least(2);
    expect(nonEmpty[0].direction).to.equal('inbound');
    const secondStart = 300 + a.length / 8 + 1500;
    expect(nonEmpty[nonEmpty.length - 1].offsetMs).to.be.within(secondStart - 600, secondStart + 1500);
    expect(nonEmpty[0].offsetMs).to.be.below(nonEmpty[nonEmpty.length - 1].offsetMs);
  });

  it('errors: unsupported language, empty phrase list, missing recogniser binary, unknown provider', async () => {
    expect(() => new PocketsphinxProvider().createStream({ language: 'de-DE' })).to.throw(SttError, /English/);
    expect(() => phrasesToJsgf(['  ', '!!'])).to.throw(SttError, /no usable phrase/);
    expect(() => createSttProvider('nope')).to.throw(SttError);
    const s = new PocketsphinxProvider({ binary: 'no-such-pocketsphinx-binary' }).createStream();
    const err = await new Promise<Error>((resolve) => s.on('error', resolve));
    expect(err.message).to.match(/cannot run no-such-pocketsphinx-binary/);
    s.write(new Int16Array(160)); // ignored after failure, no throw
  });

  it('a recogniser that stops reading never blocks write(): frames beyond the backlog are dropped', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stt-slow-'));
    const fake = path.join(dir, 'stuck-recogniser');
    fs.writeFileSync(fake, '#!/bin/sh\nexec sleep 20\n', { mode: 0o755 }); // never opens its input
    const s = new PocketsphinxProvider({ binary: fake, maxBacklogMs: 1000 }).createStream();
    const t0 = Date.now();
    for (let i = 0; i < 500; i++) s.write(new Int16Array(160)); // 10 s of audio
    expect(Date.now() - t0).to.be.below(2000);
    // kept: ~1 s (50 frames) in the process, plus what the FIFO's kernel buffer (64 KiB, ~100 frames) holds
    expect(s.droppedFrames).to.be.within(330, 460);
    const closed = new Promise<void>((r) => s.once('close', () => r()));
    s.abort();
    await closed;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('JSGF from phrases and the 2x upsampler are exact', () => {
    expect(phrasesToJsgf(['Yes!', 'talk  to an Operator', 'yes'])).to.equal('#JSGF V1.0;\ngrammar phrases;\npublic <phrase> = yes | talk to an operator ;\n');
    const up = new Upsampler2x();
    const out = new Int16Array(8);
    up.process(Int16Array.from([100, 200, 300, 400]), out);
    expect(Array.from(out)).to.deep.equal([50, 100, 150, 200, 250, 300, 350, 400]);
    up.process(Int16Array.from([0, 0, 0, 0]), out);
    expect(Array.from(out.subarray(0, 2))).to.deep.equal([200, 0]);
  });
});
