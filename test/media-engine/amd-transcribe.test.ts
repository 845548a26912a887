import { expect } from 'chai';
import path from 'node:path';
import { writeWav, readWav as readEngineWav } from '../../media-engine/audio/wav';
import { type MediaServer, type Endpoint, type Transcript } from '../../media-engine';
import { FliteProvider, EspeakProvider, fliteAvailable } from '../../media-engine/tts';
import { concat, espeak, silenceMs, soxSynth } from '../../testkit/media-engine/audio';
import { rejection, sleep, useMediaServer } from '../../testkit/media-engine/support';

describe('media-engine AMD, beep and transcription on an endpoint (loopback UDP)', function () {
  this.timeout(60000);
  let ms: MediaServer;
  let dir: string;
  let hello: string;
  let greeting: string;
  let beepAtMs: number;

  useMediaServer(
    {
      ports: 200,
      workers: 2,
      prepare(d) {
        dir = d;
        hello = path.join(dir, 'hello.wav');
        writeWav(hello, concat(espeak('hello?'), silenceMs(200)));
        // a six-second answering machine greeting ending in a beep
        greeting = path.join(dir, 'greeting.wav');
        const words = espeak("Hi, you've reached Sam and Robin. We can't take your call. Leave a message after the tone.", 'en-us', 175);
        const audio = concat(silenceMs(200), words, silenceMs(300));
        beepAtMs = audio.length / 8;
        writeWav(greeting, concat(audio, soxSynth(['0.5', 'sine', '1000'], ['vol', '0.4']), silenceMs(500)));
      },
    },
    (f) => ({ ms } = f),
  );

  /** caller = the far end that plays audio; callee = the endpoint under test. */
  async function pair(): Promise<{ far: Endpoint; ep: Endpoint }> {
    const far = await ms.createEndpoint();
    const ep = await ms.createEndpoint({ remoteSdp: far.local.sdp });
    await far.modify(ep.local.sdp);
    return { far, ep };
  }

  it('a short "hello?" answering the call is HUMAN', async () => {
    const { far, ep } = await pair();
    const verdict = ep.amd();
    await sleep(300);
    await far.play(hello);
    const r = await verdict;
    expect(r.result).to.equal('HUMAN');
    expect(r.cause).to.equal('HUMAN-800-800');
    expect(r.offsetMs).to.be.within(800, 3000);
    await far.destroy();
    await ep.destroy();
  });

  it('a six-second greeting is MACHINE, then waitForBeep finds the beep near its offset', async () => {
    const { far, ep } = await pair();
    const verdict = ep.amd();
    const started = Date.now();
    const playing = far.play(greeting);
    const r = await verdict;
    expect(r.result).to.equal('MACHINE');
    expect(r.cause).to.match(/^(MAXWORDS-3-3|LONGGREETING-\d+-1500)$/);
    expect(r.offsetMs).to.be.below(4000);
    const waitFrom = Date.now();
    const beep = await ep.waitForBeep({ timeoutMs: 10000 });
    const beepAt = waitFrom - started + beep.offsetMs;
    // wall-clock alignment of two threads and the network on a loaded machine: ±400 ms
    expect(beepAt).to.be.within(beepAtMs - 400, beepAtMs + 400);
    expect(beep.frequency).to.be.closeTo(1000, 10);
    await playing;
    await far.destroy();
    await ep.destroy();
  });

  it('ringback and silence are not a beep: waitForBeep times out; bad input is refused', async () => {
    const { far, ep } = await pair();
    const waiting = ep.waitForBeep({ timeoutMs: 2500 });
    const ringing = far.play('tone_stream://ringback').catch(() => null);
    const err = (await rejection(waiting)) as Error & { code?: string };
    expect(err.code).to.equal('ETIMEDOUT');
    expect(err.message).to.match(/no beep within 2500 ms/);
    await far.stopPlayback();
    await ringing;
    expect(((await rejection(ep.waitForBeep({ timeoutMs: -1 }))) as Error & { code?: string }).code).to.equal('EINVAL');
    expect((await rejection(ep.amd({ greeting: -5 }))).message).to.match(/greeting must be a non-negative/);
    // one AMD at a time; a hangup rejects the one running
    const running = rejection(ep.amd({ initialSilence: 60000, totalAnalysisTime: 60000 }));
    await sleep(100);
    expect(((await rejection(ep.amd())) as Error & { code?: string }).code).to.equal('EBUSY');
    await ep.destroy();
    expect((await running).message).to.match(/endpoint destroyed|media worker|destroyed/);
    await far.destroy();
  });

  it('transcribes what the caller says against a phrase list, with direction and offset', async function () {
    const { far, ep } = await pair();
    const tts = fliteAvailable() ? new FliteProvider({ outDir: dir, voice: 'slt' }) : new EspeakProvider({ outDir: dir });
    const spoken = (await tts.synthesize('talk to an operator')).path;
    const got: Transcript[] = [];
    ep.on('transcript', (t: Transcript) => got.push(t));
    await ep.transcribeStart({ language: 'en-US', direction: 'in', phrases: ['please transfer me to sales', 'talk to an operator', 'check my balance', 'goodbye'] });
    expect((await rejection(ep.transcribeStart({}))).message).to.match(/already running/);
    await sleep(500);
    await far.play(spoken);
    await sleep(800);
    await ep.transcribeStop();
    expect(got.length, JSON.stringify(got)).to.be.greaterThan(0);
    const hit = got.find((t) => t.text === 'talk to an operator');
    expect(hit, JSON.stringify(got)).to.not.equal(undefined);
    expect(hit!.direction).to.equal('in');
    expect(hit!.final).to.equal(true);
    // the phrase starts after the 0.5 s pause (plus its own leading silence, network and jitter buffer)
    const lead = leadingSilenceMs(spoken);
    expect(hit!.offsetMs).to.be.within(300 + lead, 1500 + lead);
    await far.destroy();
    await ep.destroy();
  });

  it('transcription errors: unsupported language and bad direction fail at start; stop without start is harmless', async () => {
    const { far, ep } = await pair();
    expect((await rejection(ep.transcribeStart({ language: 'fr-FR' }))).message).to.match(/English model/);
    expect((await rejection(ep.transcribeStart({ direction: 'sideways' as 'in' }))).message).to.match(/direction must be/);
    await ep.transcribeStop();
    // the failed starts left nothing running: a proper start still works
    await ep.transcribeStart({ direction: 'both', phrases: ['yes', 'no'] });
    await ep.transcribeStop();
    await far.destroy();
    await ep.destroy();
  });
});

function leadingSilenceMs(file: string): number {
  const s = readEngineWav(file).samples;
  for (let i = 0; i < s.length; i++) if (Math.abs(s[i]) > 500) return Math.round(i / 8);
  return 0;
}
