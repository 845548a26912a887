// The VAD tap runs voice detection on the caller's audio inside the media worker and sends the API
// thread only where turns of speech start and stop (ai_talk's barge-in and turn taking use it).
import { expect } from 'chai';
import type { Endpoint, MediaServer, SpeechEvent } from '../../media-engine';
import { readWav, rejection, sleep, useMediaServer } from '../../testkit/media-engine/support';

describe('media-engine: VAD tap (speech start/stop from the worker)', function () {
  this.timeout(30000);
  let ms: MediaServer;
  let speech: string;
  useMediaServer({ ports: 100, workers: 1, speech: 'Hello, I would like to talk to an operator about my bill, please.' }, (f) => ({ ms, speech } = f));

  async function pair(): Promise<[Endpoint, Endpoint]> {
    const a = await ms.createEndpoint();
    const b = await ms.createEndpoint({ remoteSdp: a.local.sdp });
    await a.modify(b.local.sdp);
    return [a, b];
  }

  it('speech played into the endpoint starts a turn and stops it after the silence; silence starts none', async () => {
    const [a, b] = await pair();
    const events: (SpeechEvent & { at: number })[] = [];
    const t0 = performance.now();
    b.on('speech', (e) => events.push({ ...e, at: performance.now() - t0 }));
    await b.vadStart({ startMs: 200, stopMs: 600 });
    await a.play('silence_stream://600');
    expect(events, 'silence starts no turn').to.deep.equal([]);
    const played = performance.now() - t0;
    await a.play(speech);
    const speechMs = (readWav(speech).samples.length / 8000) * 1000;
    await sleep(1200);
    const starts = events.filter((e) => e.state === 'start');
    const stops = events.filter((e) => e.state === 'stop');
    expect(starts.length, JSON.stringify(events)).to.be.at.least(1);
    expect(stops.length, JSON.stringify(events)).to.equal(starts.length);
    expect(events[0].state).to.equal('start');
    expect(events.at(-1)!.state).to.equal('stop');
    // the first turn starts shortly after the speech does; the last stops after it ended
    expect(starts[0].at - played).to.be.within(150, 1500);
    expect(events.at(-1)!.offsetMs).to.be.above(events[0].offsetMs + speechMs / 2);
    await b.vadStop();
    await a.destroy();
    await b.destroy();
  });

  it('a second vadStart is refused (EBUSY); vadStop during a turn reports its stop; a stopped tap is quiet', async () => {
    const [a, b] = await pair();
    const events: SpeechEvent[] = [];
    b.on('speech', (e) => events.push(e));
    await b.vadStart({ startMs: 100, stopMs: 5000 });
    expect(((await rejection(b.vadStart())) as Error & { code?: string }).code).to.equal('EBUSY');
    const playing = a.play(speech);
    await sleep(1200);
    expect(events.map((e) => e.state)).to.deep.equal(['start']);
    await b.vadStop();
    expect(events.map((e) => e.state)).to.deep.equal(['start', 'stop']);
    await playing;
    await sleep(200);
    expect(events.length).to.equal(2);
    await a.destroy();
    await b.destroy();
  });
});
