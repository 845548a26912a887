// SIP input battery (issue 13, item 1, bounded form): ~5,000 generated malformed messages against a
// real SipStack over UDP and TCP. No crash, no internal error, the stack answers a valid OPTIONS
// after every batch, every transaction ends by its timers, memory stays bounded.
// Long form: `npx tsx scripts/soak/sip-fuzz.ts --count 100000`.
import { expect } from 'chai';
import { runSipFuzz } from '../../testkit/reliability/sip/fuzz';
import { MUTATION_NAMES, sampleCases } from '../../testkit/reliability/sip/generate';

describe('reliability: malformed SIP input', function () {
  this.timeout(90_000);

  it('the generator is deterministic per seed and covers every mutation', () => {
    const p = { host: '127.0.0.1', port: 40000, stackPort: 5060 };
    const a = sampleCases(p, 400, 42);
    const b = sampleCases(p, 400, 42);
    expect(a.map((c) => c.data.toString('hex'))).to.deep.equal(b.map((c) => c.data.toString('hex')));
    expect(new Set(a.map((c) => c.mutation))).to.have.property('size', MUTATION_NAMES.length);
  });

  it('5,000 generated messages: no internal error, live after every batch, no stuck transaction, bounded memory', async () => {
    const seed = Number(process.env.SIP_FUZZ_SEED ?? 20261121);
    const r = await runSipFuzz({ count: 5000, batch: 500, seed, tcpShare: 0.1 });
    const ctx = `seed ${seed}: ${JSON.stringify({ ...r, byMutation: undefined })}`;
    expect(r.sent, ctx).to.equal(5000);
    expect(r.internalErrors, ctx).to.deep.equal([]);
    expect(r.livenessFailures, ctx).to.equal(0);
    expect(r.transactionsAtEnd, ctx).to.deep.equal({ server: 0, client: 0 });
    // the stack answered something (400s for the malformed, 200s for what parsed) and the TU saw requests
    expect(r.responses['4xx'] ?? 0, ctx).to.be.greaterThan(100);
    expect(r.requestsSeenByTu, ctx).to.be.greaterThan(100);
    // generous: the heap after GC may not grow by more than 64 MB over 5,000 messages
    expect(r.heapEndMB - r.heapStartMB, ctx).to.be.lessThan(64);
  });
});
