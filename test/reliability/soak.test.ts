// Issue 52, the soak's bounded form: 3 minutes of mixed traffic on the platform's three processes
// (calls of 10 to 60 s, conference callers, AI calls on a stand-in of OpenAI's Realtime API, registrations,
// API reads and writes; testkit/reliability/soak.ts).
// `npx tsx scripts/soak/mixed.ts` is the long form (30 minutes, calls up to 10 minutes). A heavy file
// (test/support/test-times.json): its shard runs it apart from the other heavy ones.
import { expect } from 'chai';
import { killAllSipp } from '../../testkit/media-app/harness';
import { runSoak } from '../../testkit/reliability/soak';

describe('reliability: a 3-minute mixed soak', function () {
  this.timeout(300_000);
  after(() => killAllSipp());

  it('ends no call (AI calls included) unasked, fails no registration or API request, leaves no row open, keeps RSS and descriptors bounded', async () => {
    const r = await runSoak({
      seconds: 180,
      warmupSeconds: 60,
      windowSeconds: 30,
      sampleSeconds: 5,
      callWaveSeconds: 6,
      callsPerWave: 2,
      minCallSeconds: 10,
      maxCallSeconds: 60,
      conferenceWaveSeconds: 30,
      conferenceParties: 3,
      aiWaveSeconds: 15,
      aiCallsPerWave: 2,
      registerEverySeconds: 10,
      apiRps: 5,
    });
    // the load really ran: calls of every length, conference callers, registrations, API requests
    expect(r.calls.placed, 'calls placed').to.be.at.least(40);
    expect(r.conference.placed, 'conference callers').to.be.at.least(12);
    expect(r.ai.placed, 'AI calls').to.be.at.least(16);
    expect(r.registrations.ok).to.be.at.least(12);
    expect(r.api.requests).to.be.at.least(400);
    // nothing ended that nobody hung up, nothing failed, nothing left open
    expect(r.calls.why, 'talk calls ended unasked').to.deep.equal([]);
    expect(r.conference.why, 'conference callers ended unasked').to.deep.equal([]);
    expect(r.calls.answered).to.equal(r.calls.placed);
    expect(r.conference.answered).to.equal(r.conference.placed);
    // every AI call: answered, its caller heard the agent, the vendor heard the caller, and only the caller ended it
    expect(r.ai.why, 'AI calls ended unasked').to.deep.equal([]);
    expect(r.ai.answered).to.equal(r.ai.placed);
    expect(r.ai.heard, 'AI calls whose caller heard the agent').to.equal(r.ai.answered);
    expect(r.ai.turns, "caller utterances the vendor's VAD heard").to.be.at.least(r.ai.answered);
    expect(r.registrations.failed).to.equal(0);
    expect(r.api.failed).to.equal(0);
    expect(r.rowsLeft, 'call rows not hangup').to.equal(0);
    for (const p of r.procs) {
      expect(p.restarts, `${p.name} restarts`).to.equal(0);
      // RSS after the first minute's warm-up against the end: no gross leak (+40 % in 2 minutes). Two
      // minutes beside the other shards measure V8's heap still growing as well as any leak (the first
      // CI run saw control-api +16 %); flatness within ±10 % is the long soak's (scripts/soak/mixed.ts)
      expect(p.rssPct, `${p.name} RSS ${p.first.rssMB.toFixed(1)} → ${p.last.rssMB.toFixed(1)} MB`).to.be.below(40);
      // descriptors once every call ended: back to what the process held before the load
      expect(p.drained.fds - p.start.fds, `${p.name} fds ${p.start.fds} → ${p.drained.fds}`).to.be.at.most(p.start.fds * 0.1 + 3);
    }
  });
});
