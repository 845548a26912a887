// The credit guard: an answered PSTN call ends when the customer's balance no longer pays the minutes
// its calls have started, or the next minute it is about to start. Unit rules on core/billing/credit.ts,
// then a real call through a provider (sipp) whose customer's balance is taken away mid-call.
import { hungUpCall } from '../../testkit/call-ends';
import { expect } from 'chai';
import { callsToEnd } from '../../core/billing/credit';
import { parseActions } from '../../core/flow';
import { callsRepo } from '../../core/repos/calls';
import { flowsRepo } from '../../core/repos/flows';
import { testDb, truncateAll } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, sipp, until } from '../../testkit/media-app/harness';
import { ownNumber, pstnCustomer, startOriginating, type Originating } from './originating';

const T0 = Date.UTC(2026, 0, 1);
const call = (id: string, answeredSecAgo: number, now: number) => ({ id, tm_progressing: new Date(now - answeredSecAgo * 1000) });

describe('credit rule (core/billing/credit.ts)', () => {
  const rate = 20_000;
  it('keeps calls whose started and next minutes are paid', () => {
    const now = T0;
    const all = [call('a', 10, now), call('b', 70, now)];
    // started: a 1, b 2 → 3 minutes; within the horizon nobody starts another
    expect(callsToEnd(all, new Set(['a', 'b']), 3 * rate, rate, now, now + 5000)).to.deep.equal([]);
  });
  it('ends every own call when the balance no longer pays the minutes already started', () => {
    const now = T0;
    const all = [call('a', 10, now), call('b', 70, now)];
    expect(callsToEnd(all, new Set(['a', 'b']), 2 * rate, rate, now, now + 5000)).to.deep.equal(['a', 'b']);
    expect(callsToEnd(all, new Set(['b']), 0, rate, now, now + 5000)).to.deep.equal(['b']);
  });
  it('ends a call about to start a minute the balance cannot pay; the older call keeps the last paid minute', () => {
    const now = T0;
    // both cross a minute boundary within the horizon (58 s and 118 s in); 3 started, budget 4: one more minute
    const all = [call('old', 118, now), call('new', 58, now)];
    expect(callsToEnd(all, new Set(['old', 'new']), 4 * rate, rate, now, now + 5000)).to.deep.equal(['new']);
    expect(callsToEnd(all, new Set(['old']), 4 * rate, rate, now, now + 5000)).to.deep.equal([]);
    expect(callsToEnd(all, new Set(['old', 'new']), 5 * rate, rate, now, now + 5000)).to.deep.equal([]);
  });
  it('free calls are never ended', () => {
    expect(callsToEnd([call('a', 500, T0)], new Set(['a']), 0, 0, T0, T0 + 5000)).to.deep.equal([]);
  });
});

describe('media-app credit guard', function () {
  this.timeout(90_000);
  let o: Originating;

  before(async () => {
    await truncateAll();
    o = await startOriginating({ CREDIT_GUARD_INTERVAL_MS: '500' });
  });
  after(async () => o?.close());

  it('an answered PSTN call ends within seconds once the balance no longer pays it; it is charged its started minute', async () => {
    const db = await testDb();
    const port = await freePort();
    const { cid, accountId } = await pstnCustomer(db, port, 100_000);
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'sleep', option: { duration: 30_000 } }, { type: 'hangup' }]),
    } as never);
    const row = await callsRepo(db).create({
      customer_id: cid,
      flow_id: flow.id,
      source: { type: 'tel', target: await ownNumber(db, cid) },
      destination: { type: 'tel', target: '+15557650000' },
      direction: 'outgoing',
      status: 'dialing',
    });
    const gw = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 45_000 });
    await o.bus.originate([row.id], cid);
    await until(async () => ((await callsRepo(db).get(row.id))?.status === 'progressing' ? true : null), 10_000, 'answered');
    await new Promise((r) => setTimeout(r, 1500));
    expect((await callsRepo(db).get(row.id))!.status, 'paid: still up').to.equal('progressing');
    // the balance is spent elsewhere (another charge, an operator's correction)
    await db('billing_accounts').where({ id: accountId }).update({ balance_credit: 0 });
    const t0 = Date.now();
    const done = await hungUpCall(row.id, 10_000, 'ended by the credit guard');
    expect(Date.now() - t0).to.be.below(5000);
    expect(done.data).to.deep.include({ balance_exhausted: true });
    await gw.done;
    const bills = await db('billings').where({ customer_id: cid, transaction_type: 'usage' });
    expect(bills).to.have.length(1);
    expect(bills[0].billable_units).to.equal(1);
  });
});
