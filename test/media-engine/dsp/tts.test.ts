import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isEngineFormat, readWav, readWavInfo } from '../../../media-engine/audio/wav';
import { createVad, voicedSegments } from '../../../media-engine/dsp/vad';
import { CachedTtsProvider, createTtsProvider, EspeakProvider, espeakVoiceFor, FliteProvider, fliteAvailable, TtsError, ttsProviderNames } from '../../../media-engine/tts';
import { forEachFrame, rms } from '../../../testkit/media-engine/audio';

async function expectTtsError(p: Promise<unknown>, code: string): Promise<void> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(TtsError);
    expect((err as TtsError).code).to.equal(code);
    return;
  }
  throw new Error(`expected ${code}`);
}

/** Voiced share of a file according to the VAD: real speech, not noise or silence. */
async function voicedMs(file: string): Promise<number> {
  const vad = await createVad();
  const d: boolean[] = [];
  forEachFrame(readWav(file).samples, (f) => d.push(vad.process(f)));
  vad.close();
  return voicedSegments(d).reduce((t, [a, b]) => t + b - a, 0);
}

describe('media-engine/tts', function () {
  this.timeout(30000);
  let dir: string;
  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tts-test-'))));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const SENTENCE = 'Thank you for calling. Please hold while we connect you to an agent.';

  it('espeak-ng speaks a sentence as 8 kHz 16-bit mono, of plausible length, not silent', async () => {
    const tts = createTtsProvider('provider_a', { cacheDir: dir });
    const r = await tts.synthesize(SENTENCE, { language: 'en-US' });
    expect(r.cached).to.equal(false);
    expect(isEngineFormat(readWavInfo(r.path).format)).to.equal(true);
    expect(r.durationMs).to.be.within(3000, 7000); // 12 words at ~165 wpm
    expect(rms(readWav(r.path).samples)).to.be.greaterThan(500);
    expect(await voicedMs(r.path)).to.be.greaterThan(2000);
  });

  it('a second request is a cache hit (same file, no new synthesis); other voice/language are not', async () => {
    const tts = createTtsProvider('provider_a', { cacheDir: dir });
    const a = await tts.synthesize('Goodbye.', { language: 'en-US' });
    const ino = fs.statSync(a.path).ino;
    const b = await tts.synthesize('Goodbye.', { language: 'en-US' });
    expect(b).to.deep.equal({ ...a, cached: true });
    // the same file (a synthesis renames a new one over it); its mtime is its last use (cache-trim.ts)
    expect(fs.statSync(b.path).ino).to.equal(ino);
    const c = await tts.synthesize('Goodbye.', { language: 'en-GB' });
    const d = await tts.synthesize('Goodbye.', { language: 'en-US', voice: 'female' });
    expect(new Set([a.path, c.path, d.path]).size).to.equal(3);
    const [x, y] = await Promise.all([tts.synthesize('At the same time.'), tts.synthesize('At the same time.')]);
    expect(x.path).to.equal(y.path);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
  });

  it('SSML: a break makes the audio longer than the same text without it, and tags are not spoken', async () => {
    const tts = new EspeakProvider({ outDir: dir });
    const plain = await tts.synthesize('<speak>Hello there.</speak>', { ssml: true });
    const paused = await tts.synthesize('<speak>Hello <break time="1500ms"/> there.</speak>', { ssml: true });
    expect(paused.durationMs - plain.durationMs).to.be.within(1000, 2200);
    const spokenTags = await tts.synthesize('<speak>Hello there.</speak>', { ssml: false });
    expect(spokenTags.durationMs).to.be.greaterThan(plain.durationMs + 500); // without -m the tags are read out
  });

  it('maps languages and voices to espeak-ng voices', () => {
    expect(espeakVoiceFor('en-US')).to.equal('en-us');
    expect(espeakVoiceFor('de-DE')).to.equal('de');
    expect(espeakVoiceFor('fr-CA')).to.equal('fr-fr');
    const p = new EspeakProvider({ outDir: dir });
    expect(p.voiceArg({ language: 'en-GB', voice: 'male' })).to.equal('en-gb+m3');
    expect(p.voiceArg({ voice: 'en-us+f5' })).to.equal('en-us+f5');
    expect(() => espeakVoiceFor('xx-YY')).to.throw(TtsError, /no voice/);
  });

  it('German text in a German voice has a plausible length', async () => {
    const r = await createTtsProvider('espeak-ng', { cacheDir: dir }).synthesize('Guten Tag, bitte warten Sie einen Moment.', { language: 'de-DE' });
    expect(r.durationMs).to.be.within(1500, 5000);
  });

  it('provider_b / provider_c use flite when installed (else espeak-ng variants); flite is English only', async () => {
    expect(ttsProviderNames()).to.include.members(['provider_a', 'provider_b', 'provider_c', 'espeak-ng', 'flite']);
    const b = createTtsProvider('provider_b', { cacheDir: dir });
    expect(b.name).to.equal(fliteAvailable() ? 'provider_b:flite-slt' : 'provider_b:espeak-ng-f3');
    const r = await b.synthesize(SENTENCE);
    expect(isEngineFormat(readWavInfo(r.path).format)).to.equal(true);
    expect(r.durationMs).to.be.within(2500, 7000);
    expect(await voicedMs(r.path)).to.be.greaterThan(1500);
    const c = await createTtsProvider('provider_c', { cacheDir: dir }).synthesize(SENTENCE);
    expect(c.path).to.not.equal(r.path);
    const de = await b.synthesize('Guten Tag.', { language: 'de-DE' });
    expect(de.durationMs).to.be.greaterThan(500);
    if (fliteAvailable()) await expectTtsError(new FliteProvider({ outDir: dir }).synthesize('Bonjour', { language: 'fr-FR' }), 'UNSUPPORTED_LANGUAGE');
  });

  it('a cache entry that cannot be read fails the request with its error; no synthesis is hidden behind it', async () => {
    // root reads every file, so the unreadable entry is a directory in the prompt's place (EISDIR on the read)
    const inner = new EspeakProvider({ outDir: dir });
    let made = 0;
    const counted = Object.assign(Object.create(inner) as EspeakProvider, {
      synthesize: (...a: Parameters<EspeakProvider['synthesize']>) => (made++, inner.synthesize(...a)),
    });
    const tts = new CachedTtsProvider(counted, dir);
    fs.mkdirSync(tts.pathFor('Unreadable.'));
    let err: NodeJS.ErrnoException | undefined;
    await tts.synthesize('Unreadable.').catch((e: NodeJS.ErrnoException) => (err = e));
    expect(err?.code).to.equal('EISDIR');
    expect(made, 'not synthesised again').to.equal(0);
    expect((await tts.synthesize('Readable.')).cached, 'another text is made as usual').to.equal(false);
    expect(made).to.equal(1);
  });

  it('errors: empty text, unknown provider, unknown language, bad voice name', async () => {
    const tts = createTtsProvider('provider_a', { cacheDir: dir });
    await expectTtsError(tts.synthesize('   '), 'EMPTY_TEXT');
    await expectTtsError(tts.synthesize('hi', { language: 'tlh-KL' }), 'UNSUPPORTED_LANGUAGE');
    await expectTtsError(tts.synthesize('hi', { voice: 'en; rm -rf' }), 'SYNTHESIS_FAILED');
    expect(() => createTtsProvider('nope', { cacheDir: dir })).to.throw(TtsError, /unknown TTS provider/);
  });
});
