// Virtual numbers (+899) are routed internally on every path (call-core issue): a call to the
// customer's own +899 number runs that number's flow on the platform, with no provider and no charge
// (no route exists here, the balance is zero), on a real second leg whose audio reaches the caller.
// A +899 number the customer does not own (nobody's, or another customer's) is 404 NUMBER_NOT_FOUND
// at the API, with the same answer for both; at run time the leg fails (data.dial_refused).
import { expect } from 'chai';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { numbersRepo } from '../../core/repos/numbers';
import { flowsRepo } from '../../core/repos/flows';
import { parseActions } from '../../core/flow';
import { createFixture } from '../../testkit/api';
import { freePort, udpBound } from '../../testkit/ports';
import { createExtension, killAllSipp, RtpSink, sipp, until } from '../../testkit/media-app/harness';
import { party, phoneCallRefused, startStack, type Stack } from '../xfer/support';

const LOOPBACK = { EGRESS_ALLOW_CIDRS: '127.0.0.0/8' };
const SPEECH = 'This is the virtual number speaking. '.repeat(8);

/** A sipp party on loopback that answers, sends its audio to a fresh RtpSink and waits for our BYE. */
async function listeningParty() {
  const sink = await RtpSink.open();
  const px = await freePort();
  const x = sipp(party({ rtpPort: sink.port, byeTimeoutMs: 60_000 }), ['-i', '127.0.0.1', '-p', String(px), '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 });
  await udpBound(px); // the party has bound its port: the INVITE waits in its socket
  return { sink, px, x };
}

describe('virtual numbers are routed internally', function () {
  this.timeout(120_000);
  let s: Stack;
  let own: string;
  let others: string;
  const nobody = '+899555000999';
  const open: { close(): void }[] = [];

  before(async () => {
    s = await startStack(LOOPBACK);
    const flow = await flowsRepo(s.t.ctx.db).create({
      customer_id: s.f.customer.id,
      actions: parseActions([{ type: 'answer' }, { type: 'talk', option: { text: SPEECH, language: 'en-US' } }, { type: 'hangup' }]),
    } as never);
    const suffix = String(Date.now()).slice(-6);
    own = `+899100${suffix}`;
    others = `+899200${suffix}`;
    await numbersRepo(s.t.ctx.db).create({ customer_id: s.f.customer.id, number: own, type: 'virtual', call_flow_id: flow.id } as never);
    const other = await createFixture(s.t.ctx);
    await numbersRepo(s.t.ctx.db).create({ customer_id: other.customer.id, number: others, type: 'virtual', call_flow_id: flow.id } as never);
  });
  after(async () => {
    killAllSipp();
    for (const o of open) o.close();
    await s?.close();
  });

  const tel = (target: string) => ({ type: 'tel', target });
  const rowsOf = (where: Record<string, unknown>) => s.t.ctx.db('calls').where({ customer_id: s.f.customer.id, ...where }) as Promise<CallRow[]>;

  it('POST /calls and /groupcalls to a +899 number the customer does not own: 404 NUMBER_NOT_FOUND, the same for nobody’s and another customer’s', async () => {
    const bodies: string[] = [];
    for (const n of [nobody, others]) {
      for (const path of ['/calls', '/groupcalls']) {
        const extra = path === '/groupcalls' ? { ring_method: 'ring_all', answer_method: 'hangup_others' } : {};
        const r = await s.api.post(path, { source: tel(own), destinations: [tel(n)], actions: [{ type: 'hangup' }], ...extra });
        expect(r.status, `${path} ${n}: ${JSON.stringify(r.body)}`).to.equal(404);
        expect(r.body.error).to.include({ reason: 'NUMBER_NOT_FOUND' });
        expect(r.body.error.details[0]).to.include({ field: 'destinations[0].target', index: 0 });
        bodies.push(JSON.stringify({ ...r.body.error, request_id: '' }).replaceAll(n, 'N'));
      }
    }
    expect(bodies[0]).to.equal(bodies[2]);
    expect(bodies[1]).to.equal(bodies[3]);
    expect(await rowsOf({})).to.have.length(0);
  });

  it('POST /calls to the own +899 number with zero balance and no route: the number’s flow runs and its speech reaches the party the call connects', async () => {
    const { sink, px, x } = await listeningParty();
    open.push(sink);
    const res = await s.api.post('/calls', {
      source: tel(own),
      destinations: [tel(own)],
      actions: [{ type: 'connect', option: { destinations: [{ type: 'sip', target: `x@127.0.0.1:${px}` }] } }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const leg = res.body.calls[0] as { id: string };
    await until(() => sink.voiced > 25, 30_000, `X hears the number's flow (levels ${sink.levels.slice(-20).map(Math.round).join(',')})`);
    // the number's flow ran on an incoming leg of the same customer, to that number
    const inbound = await until(async () => (await rowsOf({ direction: 'incoming' })).find((r) => r.destination.target === own), 10_000, 'the internal incoming leg');
    const flow = (await s.t.ctx.db('numbers').where({ number: own }).first())!.call_flow_id;
    expect(inbound.flow_id).to.equal(flow);
    expect(inbound.source).to.deep.include({ type: 'tel', target: own });
    expect((await x.done).code).to.equal(0);
    await until(async () => (await callsRepo(s.t.ctx.db).get(leg.id))?.status === 'hangup', 20_000, 'the outgoing leg hung up');
    expect((await callsRepo(s.t.ctx.db).get(leg.id))!.data.dial_refused).to.equal(undefined);
    // free: no billing row, the balance untouched
    expect(await s.t.ctx.db('billings').where({ customer_id: s.f.customer.id, transaction_type: 'usage' })).to.have.length(0);
  });

  it('a flow connecting to a +899 number it does not own fails that leg (number_not_found); nothing is dialled', async () => {
    const { sink, px, x } = await listeningParty();
    open.push(sink);
    const res = await s.api.post('/calls', {
      source: tel(own),
      destinations: [{ type: 'sip', target: `x@127.0.0.1:${px}` }],
      actions: [{ type: 'connect', option: { destinations: [tel(others)] } }, { type: 'connect', option: { destinations: [tel(nobody)] } }, { type: 'hangup' }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect((await x.done).code).to.equal(0);
    const refused = await until(
      async () => {
        const rows = (await rowsOf({ master_call_id: res.body.calls[0].id })).filter((r) => r.status === 'hangup');
        return rows.length === 2 ? rows : null;
      },
      20_000,
      'both legs over',
    );
    for (const r of refused) expect(r.data.dial_refused, r.destination.target).to.equal('number_not_found');
    expect((await rowsOf({ direction: 'incoming' })).filter((r) => r.destination.target === others || r.destination.target === nobody)).to.have.length(0);
  });

  it('a SIP extension calling another customer’s +899 number gets 404, as for nobody’s; its flow does not run', async () => {
    const a = await createExtension(s.f.customer.id);
    for (const n of [others, nobody]) {
      const r = await sipp(phoneCallRefused(a.ext.username, a.domain, n, 404), [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password]).done;
      expect(r.code, `${n}: ${r.errors}${r.messages.slice(-2000)}`).to.equal(0);
    }
    expect((await rowsOf({ direction: 'incoming' })).filter((r) => r.destination.target === others)).to.have.length(0);
  });

  it('REFER from a phone to the own +899 number: the transferee hears the number’s flow', async () => {
    const sinkX = await RtpSink.open();
    const sinkA = await RtpSink.open();
    open.push(sinkX, sinkA);
    const [px, pa] = [await freePort(), await freePort()];
    const x = sipp(party({ rtpPort: sinkX.port, byeTimeoutMs: 60_000 }), ['-i', '127.0.0.1', '-p', String(px), '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 });
    const a = sipp(party({ rtpPort: sinkA.port, referTo: `sip:${own}@sip.test`, referAfterMs: 800 }), ['-i', '127.0.0.1', '-p', String(pa), '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 });
    await Promise.all([udpBound(px), udpBound(pa)]); // both parties have bound their ports
    const res = await s.api.post('/calls', {
      source: tel(own),
      destinations: [{ type: 'sip', target: `x@127.0.0.1:${px}` }],
      actions: [{ type: 'connect', option: { destinations: [{ type: 'sip', target: `a@127.0.0.1:${pa}` }] } }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const ra = await a.done;
    expect(ra.code, ra.errors + ra.messages).to.equal(0);
    const before = sinkX.voiced;
    await until(() => sinkX.voiced - before > 25, 30_000, 'X hears the number’s flow');
    const t = await s.t.ctx.db('transfers').where({ customer_id: s.f.customer.id }).first();
    expect(t).to.include({ type: 'blind', source: 'refer', status: 'done' });
    await s.api.post(`/calls/${res.body.calls[0].id}/hangup`, undefined);
    await x.done;
  });
});
