// media-engine's Transcriber (transcriber.ts) opens a fork per side asked, one after the other. A stop()
// while a side's fork is still opening (on fsmrf each open is a round trip to the switch and its connection)
// must not leave that fork running with nothing to stop it: the fork that opens after the stop is stopped, and
// no recogniser is made for it. The forks here are the fork interface over nothing; the recogniser is the
// default provider's (pocketsphinx).
import { expect } from 'chai';
import { Transcriber } from '../../media-engine';

describe('media-engine Transcriber: a stop while a fork opens', () => {
  it('the fork that opens after stop() is stopped; the one before too', async () => {
    const t = new Transcriber({ direction: 'both' });
    const stopped: string[] = [];
    let openOut: () => void = () => undefined;
    let outAsked: () => void = () => undefined;
    const asked = new Promise<void>((r) => (outAsked = r));
    const starting = t.start(async (o) => {
      if (o.mix === 'out') {
        outAsked();
        await new Promise<void>((r) => (openOut = r));
      }
      return {
        rate: 8000,
        stop: async () => {
          stopped.push(String(o.mix));
          return null;
        },
      };
    });
    await asked; // the 'in' side runs; the 'out' fork is opening
    const stopping = t.stop();
    openOut();
    await starting;
    await stopping;
    expect(stopped.sort()).to.deep.equal(['in', 'out']);
  });
});
