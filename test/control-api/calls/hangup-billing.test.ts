/**
 * Every path that ends a Call row outside a media-app session runs the billing step of a call's end
 * (core/billing/call-end.ts) in the hangup's transaction: an answered, admitted PSTN call ended there is
 * charged its minutes once, and a second end (a retried request, another path) charges nothing more.
 * The session's own close is covered by test/media-app/call-billing.test.ts. Real Postgres and Redis.
 */
import { expect } from 'chai';
import pino from 'pino';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Fixture, TestApp } from '../../../testkit/api';
import { api, freshFixture, startApp, stopApp } from '../flows/support';
import { addBalance, ensureBillingAccount, rates, setRates } from '../../../core/billing';
import { callsRepo, type CallRow } from '../../../core/repos/calls';
import { groupcallsRepo } from '../../../core/repos/groupcalls';
import { NodeSweeper } from '../../../core/calls/node-sweep';
import { eventStreamKey, EventPublisher } from '../../../core/events/bus';
import { MEDIA_NODES_KEY, nodeCallsKey } from '../../../core/calls/node-keys';

const RATE = 20_000;
const ANSWERED_SECONDS = 61; // two started minutes

describe('calls: every hangup path outside the session charges an answered PSTN call once', function () {
  this.timeout(30_000);
  let t: TestApp;
  let f: Fixture;
  let accountId: string;

  before(async () => {
    t = await startApp();
  });
  after(async () => {
    setRates(null);
    await stopApp(t);
  });
  beforeEach(async () => {
    f = await freshFixture(t);
    setRates({ call_pstn_outgoing: RATE });
    accountId = (await ensureBillingAccount(t.ctx.db, f.customer.id)).id;
    await addBalance(t.ctx.db, accountId, 1_000_000, `hb:${f.customer.id}`);
  });

  /** An outgoing PSTN call the dial policy admitted, answered ANSWERED_SECONDS ago, still `status` on `nodeId`. */
  async function answeredPstnCall(status: CallRow['status'], nodeId = ''): Promise<CallRow> {
    const row = await callsRepo(t.ctx.db).create({
      customer_id: f.customer.id,
      source: { type: 'tel', target: '+15550100' },
      destination: { type: 'tel', target: '+15557654321' },
      direction: 'outgoing',
      status,
      node_id: nodeId,
      data: { pstn_admitted: true },
    });
    await t.ctx
      .db('calls')
      .where({ id: row.id })
      .update({ tm_progressing: new Date(Date.now() - ANSWERED_SECONDS * 1000) });
    return row;
  }

  const usage = (callId: string) => t.ctx.db('billings').where({ reference_id: callId, transaction_type: 'usage' }).select('*');
  const balance = async () => Number((await t.ctx.db('billing_accounts').where({ id: accountId }).first('balance_credit'))!.balance_credit);

  /** The call was ended, and charged exactly once: its minutes from answer to hangup at the rate. */
  async function expectChargedOnce(callId: string): Promise<void> {
    const call = (await callsRepo(t.ctx.db).get(callId))!;
    expect(call.status).to.equal('hangup');
    const rows = await usage(callId);
    expect(rows, 'billing rows of the call').to.have.length(1);
    const seconds = Math.ceil((call.tm_hangup!.getTime() - call.tm_progressing!.getTime()) / 1000);
    const units = Math.ceil(seconds / 60);
    expect(units).to.equal(2);
    expect(rows[0]).to.include({ reference_type: 'call', cost_type: 'call_pstn_outgoing', status: 'end', billable_units: units });
    expect(Number(rows[0].amount_credit)).to.equal(-RATE * units);
    expect(await balance()).to.equal(1_000_000 - RATE * units);
  }

  it('POST /calls/:id/hangup of a call no node holds', async () => {
    const c = await answeredPstnCall('dialing');
    const a = api(t, f);
    const r = await a.post(`/calls/${c.id}/hangup`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    await expectChargedOnce(c.id);
    // asked again: refused, nothing more charged
    expect((await a.post(`/calls/${c.id}/hangup`)).status).to.equal(409);
    await expectChargedOnce(c.id);
  });

  it('POST /groupcalls/:id/hangup of a groupcall no node rings', async () => {
    const c = await answeredPstnCall('dialing');
    const g = await groupcallsRepo(t.ctx.db).create({
      customer_id: f.customer.id,
      source: { type: 'tel', target: '+15550100' },
      destinations: [{ type: 'tel', target: '+15557654321' }],
      ring_method: 'linear',
      answer_method: 'hangup_others',
      call_ids: [c.id],
      call_count: 1,
    });
    await t.ctx.db('calls').where({ id: c.id }).update({ groupcall_id: g.id });
    const r = await api(t, f).post(`/groupcalls/${g.id}/hangup`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    await expectChargedOnce(c.id);
    // a later hangup write (the session's close, a sweep) charges nothing more
    await callsRepo(t.ctx.db).hangup(c.id, 'normal_clearing');
    await expectChargedOnce(c.id);
  });

  it("the node sweeper ending a dead node's answered call", async () => {
    const redis = new Redis(process.env.TEST_REDIS_URL!);
    const prefix = `thb${process.pid}_${randomBytes(3).toString('hex')}:`;
    const node = `dead-${randomBytes(3).toString('hex')}`;
    const sweeper = new NodeSweeper({ db: t.ctx.db, redis, keyPrefix: prefix, events: new EventPublisher(redis, eventStreamKey(prefix)), logger: pino({ level: 'silent' }) });
    try {
      const c = await answeredPstnCall('progressing', node);
      await redis.sadd(prefix + MEDIA_NODES_KEY, node);
      await redis.sadd(prefix + nodeCallsKey(node), c.id);
      const swept = await sweeper.tick();
      expect(swept.map((s) => s.calls)).to.deep.equal([[c.id]]);
      await expectChargedOnce(c.id);
      // swept again (another sweeper, the node's restart): nothing more
      await sweeper.sweepNode(node);
      await expectChargedOnce(c.id);
    } finally {
      await sweeper.stop();
      await redis.del(prefix + MEDIA_NODES_KEY, prefix + nodeCallsKey(node));
      redis.disconnect();
    }
  });

  it("a hangup write with no billing step charges nothing (the step is the caller's, not the repository's)", async () => {
    const c = await answeredPstnCall('progressing');
    expect((await callsRepo(t.ctx.db).hangup(c.id, 'normal_clearing')).changed).to.equal(true);
    expect(await usage(c.id)).to.have.length(0);
    expect(await balance()).to.equal(1_000_000);
    expect(rates().call_pstn_outgoing).to.equal(RATE);
  });
});
