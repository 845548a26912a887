// Calls are charged when they end: an answered PSTN call (admitted by the dial policy) is charged
// its minutes from answer to hangup, rounded up, once, at call_pstn_outgoing's rate; an unanswered
// PSTN call and a SIP call cost nothing. The charge is written in the hangup's own transaction.
import { expect } from 'chai';
import { rates } from '../../core/billing/rates';
import { parseActions } from '../../core/flow';
import { callsRepo } from '../../core/repos/calls';
import { flowsRepo } from '../../core/repos/flows';
import { testDb, truncateAll } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, sipp, until } from '../../testkit/media-app/harness';
import { ownNumber, pstnCustomer, startOriginating, type Originating } from './originating';

describe('media-app: calls are charged when they end', function () {
  this.timeout(90_000);
  let o: Originating;

  before(async () => {
    await truncateAll();
    o = await startOriginating();
  });
  after(async () => o?.close());

  /** A customer who may call numbers (1 USD, a provider on `port`), a flow that talks then hangs up, and its call to `destination`. */
  async function setup(destination: { type: 'tel' | 'sip'; target: string }, port: number) {
    const db = await testDb();
    const { cid, accountId } = await pstnCustomer(db, port);
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'talk', option: { text: 'Your appointment is tomorrow at nine.', language: 'en-US' } }, { type: 'hangup' }]),
    } as never);
    const row = await callsRepo(db).create({
      customer_id: cid,
      flow_id: flow.id,
      source: { type: 'tel', target: await ownNumber(db, cid) },
      destination,
      direction: 'outgoing',
      status: 'dialing',
    });
    const balance = async () => (await db('billing_accounts').where({ id: accountId }).first())!.balance_credit as number;
    const billings = () => db('billings').where({ customer_id: cid, transaction_type: 'usage' });
    const ended = () => until(async () => ((await callsRepo(db).get(row.id))?.status === 'hangup' ? callsRepo(db).get(row.id) : null), 20_000, 'hangup');
    return { db, cid, row, balance, billings, ended };
  }

  it('an answered PSTN call is charged its minutes from answer to hangup, once', async () => {
    const port = await freePort();
    const s = await setup({ type: 'tel', target: '+15557654321' }, port);
    const gw = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    await o.bus.originate([s.row.id], s.cid);
    expect((await gw.done).code).to.equal(0);
    const call = (await s.ended())!;
    expect(call.tm_progressing).to.be.instanceOf(Date);
    const rows = await until(
      async () => {
        const r = await s.billings();
        return r.length ? r : null;
      },
      5_000,
      'a billing row',
    );
    expect(rows).to.have.length(1);
    const seconds = Math.ceil((call.tm_hangup!.getTime() - call.tm_progressing!.getTime()) / 1000);
    expect(rows[0]).to.include({ reference_type: 'call', reference_id: call.id, cost_type: 'call_pstn_outgoing', status: 'end', billable_units: Math.ceil(seconds / 60) });
    expect(rows[0].usage_duration).to.be.within(seconds - 1, seconds + 1);
    expect(Number(rows[0].amount_credit)).to.equal(-rates().call_pstn_outgoing * rows[0].billable_units);
    expect(await s.balance()).to.equal(1_000_000 - rates().call_pstn_outgoing * rows[0].billable_units);
    // a second hangup write (a retried command, the node sweeper) charges nothing more
    await callsRepo(s.db).hangup(call.id, 'normal_clearing');
    expect(await s.billings()).to.have.length(1);
  });

  it('an unanswered PSTN call and an answered SIP call cost nothing', async () => {
    const port = await freePort();
    const busy = await setup({ type: 'tel', target: '+15557654322' }, port);
    const gw = sipp(answeringUas({ final: 486 }), ['-i', '127.0.0.1', '-p', String(port), '-m', '1']);
    await o.bus.originate([busy.row.id], busy.cid);
    await gw.done;
    expect((await busy.ended())!.hangup_reason).to.equal('busy');
    const sipPort = await freePort();
    const sip = await setup({ type: 'sip', target: `callee@127.0.0.1:${sipPort}` }, await freePort());
    const callee = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(sipPort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    await o.bus.originate([sip.row.id], sip.cid);
    await callee.done;
    expect((await sip.ended())!.tm_progressing).to.be.instanceOf(Date);
    await new Promise((r) => setTimeout(r, 500));
    expect(await busy.billings()).to.have.length(0);
    expect(await sip.billings()).to.have.length(0);
    expect(await busy.balance()).to.equal(1_000_000);
    expect(await sip.balance()).to.equal(1_000_000);
  });
});
