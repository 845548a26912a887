// A leg's AMD (media-engine/worker/leg-analysis.ts) starts after its VAD loads (async): a cancel or the
// leg's close in that window (an fsmrf AMD whose fork connection dropped at once, an endpoint destroyed
// as AMD was asked) must end that AMD too. It did not: the AMD began after the cancel, with no frames
// coming, and never settled (fsmrf-fork.test.ts's AMD case hung to mocha's timeout on a loaded machine).
// The VAD tap likewise: a stop while its VAD loaded left the tap running after it.
import { expect } from 'chai';
import { AnalysisError, LegAnalysis } from '../../media-engine/worker/leg-analysis';
import { bounded } from '../../testkit/bounded';

/** The AMD's outcome: its verdict, or the error it rejected with. */
const settled = (p: Promise<unknown>) =>
  bounded(
    p.then(
      (v) => ({ v }),
      (e: unknown) => ({ e }),
    ),
    2000,
    'the AMD settles',
  );

describe('media-engine LegAnalysis: an AMD ended while its VAD loads', () => {
  it("a cancel while the VAD loads rejects that AMD with the cancel's reason and code; nothing stays active", async () => {
    const a = new LegAnalysis();
    const amd = a.startAmd({});
    a.cancel('the audio fork ended: its connection closed', 'EPIPE');
    const { e } = (await settled(amd)) as { e?: AnalysisError };
    expect(e).to.be.instanceOf(AnalysisError);
    expect(e!.code).to.equal('EPIPE');
    expect(e!.message).to.equal('the audio fork ended: its connection closed');
    expect(a.active).to.equal(false);
  });

  it('the leg closed while the VAD loads: the AMD rejects with the close, nothing stays active', async () => {
    const a = new LegAnalysis();
    const amd = a.startAmd({ vad: 'energy' });
    a.close('endpoint destroyed', 'EDESTROYED');
    const { e } = (await settled(amd)) as { e?: AnalysisError };
    expect(e?.code).to.equal('EDESTROYED');
    expect(a.active).to.equal(false);
  });

  it('a cancel before the AMD was asked does not end it: it runs to its verdict', async () => {
    const a = new LegAnalysis();
    a.cancel('stopped', 'ECANCELED');
    const amd = a.startAmd({ initialSilence: 200, totalAnalysisTime: 1000, initialSilenceStatus: 'MACHINE' });
    const silence = new Int16Array(160);
    let feeding = true;
    const feed = () => {
      if (!feeding) return;
      a.process(silence);
      setImmediate(feed);
    };
    feed();
    const out = (await settled(amd).finally(() => (feeding = false))) as { v?: { result: string } };
    expect(out.v?.result).to.equal('MACHINE');
  });

  it('the VAD tap stopped while its VAD loads does not start (no speech events after the stop)', async () => {
    const a = new LegAnalysis();
    const started = a.startVad();
    a.stopVad();
    await bounded(started, 2000, 'the tap start settles');
    expect(a.active).to.equal(false);
  });
});
