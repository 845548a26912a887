import { expect } from 'chai';
import { AnsweringMachineDetector, type AmdEvent, type AmdOptions } from '../../../media-engine/dsp/amd';
import { createVad } from '../../../media-engine/dsp/vad';
import { concat, espeak, forEachFrame, noise, silenceMs, soxSynth } from '../../../testkit/media-engine/audio';

async function run(s: Int16Array, opts: AmdOptions = {}): Promise<AmdEvent[]> {
  const vad = await createVad();
  const amd = new AnsweringMachineDetector({ vad, ...opts });
  const ev: AmdEvent[] = [];
  forEachFrame(s, (f) => {
    const e = amd.process(f);
    if (e) ev.push(e);
  });
  vad.close();
  return ev;
}

describe('media-engine/dsp AMD', function () {
  this.timeout(30000);

  it('a short "hello?" followed by silence is HUMAN', async () => {
    const ev = await run(concat(silenceMs(400), espeak('hello?'), silenceMs(2500)));
    expect(ev).to.have.length(1);
    expect(ev[0]).to.include({ type: 'verdict', status: 'HUMAN', cause: 'HUMAN-800-800' });
  });

  it('a six-second greeting ending in a beep is MACHINE, then the beep is found where it is', async () => {
    const greeting = espeak("Hi, you've reached Sam and Robin. We can't take your call. Leave a message after the tone.", 'en-us', 175);
    expect(greeting.length / 8).to.be.within(4500, 7500);
    const beepAt = 300 + greeting.length / 8 + 300;
    const s = concat(silenceMs(300), greeting, silenceMs(300), soxSynth(['0.4', 'sine', '1000'], ['vol', '0.4']), silenceMs(1000));
    const ev = await run(s, { detectBeep: true });
    expect(ev).to.have.length(2);
    const [verdict, beep] = ev;
    expect(verdict).to.include({ type: 'verdict', status: 'MACHINE' });
    if (verdict.type !== 'verdict' || beep.type !== 'beep') throw new Error('unexpected events');
    expect(verdict.cause).to.match(/^(MAXWORDS-3-3|LONGGREETING-\d+-1500)$/);
    expect(verdict.offsetMs).to.be.below(3000);
    expect(beep.offsetMs).to.be.within(beepAt - 20, beepAt + 40);
    expect(beep.frequency).to.be.closeTo(1000, 5);
  });

  it('a long greeting is LONGGREETING when words are not counted separately', async () => {
    const s = concat(silenceMs(300), espeak('Hellooooo there, this is the answering machine of the Millers', 'en-us', 140), silenceMs(500));
    const [v] = await run(s, { maximumNumberOfWords: 100 });
    expect(v).to.include({ type: 'verdict', status: 'MACHINE' });
    expect(v.type === 'verdict' && v.cause).to.equal('LONGGREETING-1500-1500');
  });

  it('silence is NOTSURE / INITIALSILENCE (MACHINE when configured like app_amd)', async () => {
    const [v] = await run(silenceMs(4000));
    expect(v).to.deep.equal({ type: 'verdict', status: 'NOTSURE', cause: 'INITIALSILENCE-2500-2500', offsetMs: 2500 });
    const [w] = await run(noise(40000, 80), { initialSilenceStatus: 'MACHINE', initialSilence: 2000 });
    expect(w).to.include({ status: 'MACHINE', cause: 'INITIALSILENCE-2000-2000' });
  });

  it('a continuous tone is MAXWORDLENGTH; no decision within the total time is TOOLONG', async () => {
    const [v] = await run(soxSynth(['3', 'sine', '300'], ['vol', '0.3']), { maximumWordLength: 1000, greeting: 5000 });
    expect(v).to.include({ status: 'MACHINE', cause: 'MAXWORDLENGTH-1000-1000' });
    const hello = espeak('hi');
    const s = concat(hello, silenceMs(500), hello, silenceMs(500), hello, silenceMs(3000));
    const [t] = await run(s, { maximumNumberOfWords: 10, afterGreetingSilence: 5000, totalAnalysisTime: 3000 });
    expect(t).to.include({ status: 'NOTSURE', cause: 'TOOLONG-3000' });
  });

  it('reports beep-timeout when no beep follows a MACHINE verdict, and nothing after done', async () => {
    const greeting = espeak('Hello, you have reached the voicemail of Chris, please leave a message');
    const ev = await run(concat(greeting, silenceMs(3000)), { detectBeep: true, beepTimeoutMs: 1000 });
    expect(ev.map((e) => e.type)).to.deep.equal(['verdict', 'beep-timeout']);
  });

  it('validates parameters and frame size', () => {
    expect(() => new AnsweringMachineDetector({ greeting: -1 })).to.throw(RangeError);
    expect(() => new AnsweringMachineDetector().process(new Int16Array(20))).to.throw(RangeError);
  });
});
