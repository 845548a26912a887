// Chargeable calls need balance on every path (finding 7, part b). Charged: PSTN numbers (through
// the customer's routes to providers, call_pstn_outgoing). Free: SIP URIs, extensions, agents' own
// addresses when free, +899 virtual numbers. A customer with zero balance: POST /calls, /groupcalls
// and /transfers to a number answer 402 INSUFFICIENT_BALANCE; the flow's call and connect legs,
// a REFER and a SIP extension calling a number are refused when dialled (data.dial_refused
// insufficient_balance, SIP 402) — and the provider's gateway (a real UDP listener on loopback)
// receives 0 INVITEs. A free SIP call goes through meanwhile; with balance the same number is dialled.
import { sipProvider } from '../../testkit/providers';
import { expect } from 'chai';
import type { CallRow } from '../../core/repos/calls';
import { routesRepo } from '../../core/repos/routes';
import { numbersRepo } from '../../core/repos/numbers';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { createExtension, killAllSipp, sipp, sleep, until } from '../../testkit/media-app/harness';
import { party, referFailsThenHangUp, phoneCallRefused, startStack, type Stack } from '../xfer/support';
import { InviteCounter } from '../../testkit/queue/sip-parties';

describe('security: chargeable calls need balance on every path', function () {
  this.timeout(120_000);
  let s: Stack;
  let gw: InviteCounter;
  let source: string;

  before(async () => {
    gw = await InviteCounter.open({ busy: true });
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    await s.t.ctx.repos.outboundConfigs.update(s.f.outboundConfig.id, { destination_whitelist: ['us'] }, { customerId: s.f.customer.id });
    source = `+1415${String(Date.now()).slice(-7)}`;
    await numbersRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, number: source, type: 'normal' });
    const provider = await sipProvider(s.t.ctx.db, `127.0.0.1:${gw.port}`, 'gateway');
    await routesRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, name: 'all', detail: '', provider_id: provider.id, priority: 1, target: 'all' });
    expect((await ensureBillingAccount(s.t.ctx.db, s.f.customer.id)).balance_credit).to.equal(0);
  });
  after(async () => {
    killAllSipp();
    gw?.close();
    await s?.close();
  });

  const tel = (target: string) => ({ type: 'tel', target });
  const sip = (target: string) => ({ type: 'sip', target });
  const legsOf = async (masterId: string) => (await s.t.ctx.db('calls').where({ master_call_id: masterId })) as CallRow[];
  const expect402 = (r: { status: number; body: { error?: { status: string; reason: string } } }, what: string) => {
    expect(r.status, `${what}: ${JSON.stringify(r.body)}`).to.equal(402);
    expect(r.body.error).to.include({ status: 'PAYMENT_REQUIRED', reason: 'INSUFFICIENT_BALANCE' });
  };

  async function sipParty(scenario = (rtp: number) => party({ rtpPort: rtp, byeTimeoutMs: 60_000 })) {
    const port = await freePort();
    const run = sipp(scenario(await sippMediaPort()), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 });
    await sleep(300);
    return { port, run };
  }

  it('POST /calls and /groupcalls to a number: 402, nothing written, nothing dialled', async () => {
    expect402(await s.api.post('/calls', { source: tel(source), destinations: [tel('+12125550101')], actions: [{ type: 'hangup' }] }), 'calls');
    expect402(
      await s.api.post('/groupcalls', { source: tel(source), destinations: [tel('+12125550102')], actions: [{ type: 'hangup' }], ring_method: 'ring_all', answer_method: 'hangup_others' }),
      'groupcalls',
    );
    expect(await s.t.ctx.db('calls').where({ customer_id: s.f.customer.id })).to.have.length(0);
    expect(gw.count).to.equal(0);
  });

  it('a free SIP call goes through with zero balance; its flow’s call and connect legs to numbers are refused (insufficient_balance)', async () => {
    const x = await sipParty();
    const res = await s.api.post('/calls', {
      source: tel(source),
      destinations: [sip(`x@127.0.0.1:${x.port}`)],
      actions: [
        { type: 'call', option: { source: tel(source), destinations: [tel('+12125550111')], actions: [{ type: 'hangup' }] } },
        { type: 'connect', option: { source: tel(source), destinations: [tel('+12125550112')] } },
        { type: 'hangup' },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect((await x.run.done).code).to.equal(0);
    const refused = await until(
      async () => {
        const rows = (await s.t.ctx.db('calls').where({ customer_id: s.f.customer.id }).whereRaw(`destination->>'type' = 'tel'`)) as CallRow[];
        return rows.length === 2 && rows.every((r) => r.status === 'hangup') ? rows : null;
      },
      20_000,
      'both paid legs over',
    );
    for (const r of refused) expect(r.data.dial_refused, r.destination.target).to.equal('insufficient_balance');
    const xRow = (await s.t.ctx.db('calls').where({ id: res.body.calls[0].id }).first()) as CallRow;
    expect(xRow.tm_progressing, 'the free call was answered').to.be.instanceOf(Date);
    expect(gw.count).to.equal(0);
  });

  it('transfers: the API answers 402, a REFER to a number fails its NOTIFY; nothing dialled', async () => {
    const refuses = (rtp: number) => party({ rtpPort: rtp, referTo: 'sip:+12125550121@sip.test', referAfterMs: 800, byeTimeoutMs: 60_000, referFails: true });
    const a = await sipParty(refuses);
    const x = await sipParty();
    const res = await s.api.post('/calls', {
      source: tel(source),
      destinations: [sip(`x@127.0.0.1:${x.port}`)],
      actions: [{ type: 'connect', option: { destinations: [sip(`a@127.0.0.1:${a.port}`)] } }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const aLeg = await until(async () => (await legsOf(res.body.calls[0].id)).find((l) => l.status === 'progressing'), 20_000, 'A up');
    expect402(await s.api.post('/transfers', { transfer_type: 'blind', transferer_call_id: aLeg.id, transferee_addresses: [tel('+12125550122')] }), 'transfers');
    await referFailsThenHangUp(s, res.body.calls[0].id, aLeg.id, a.run, [x.run]);
    expect(gw.count).to.equal(0);
  });

  it('a SIP extension calling a number gets 402 Payment Required; nothing dialled', async () => {
    const a = await createExtension(s.f.customer.id);
    const n = '+12125550131';
    const scenario = phoneCallRefused(a.ext.username, a.domain, n, 402);
    const r = await sipp(scenario, [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password]).done;
    expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
    expect(gw.count).to.equal(0);
  });

  it('with balance, the same POST /calls is dialled: the gateway receives the INVITE', async () => {
    const acc = await ensureBillingAccount(s.t.ctx.db, s.f.customer.id);
    await addBalance(s.t.ctx.db, acc.id, 1_000_000, `balance-test:${acc.id}`);
    const res = await s.api.post('/calls', { source: tel(source), destinations: [tel('+12125550141')], actions: [{ type: 'hangup' }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await until(() => gw.count === 1, 15_000, 'the gateway got the INVITE');
    expect(gw.users).to.deep.equal(['+12125550141']);
  });
});
