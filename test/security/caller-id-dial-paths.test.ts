// Caller id on the legs media-app dials itself (core/calls/caller-id): a PSTN leg goes out with an
// active normal number of the customer, the inbound PSTN caller's own number when the leg forwards that
// call, else the outbound config's default number, else it is refused and nothing reaches the
// carrier. The carrier is a sipp UAS (or a bare UDP socket that must stay silent) on loopback; the
// From user it receives is what is checked.
import { expect } from 'chai';
import dgram from 'node:dgram';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { agentsRepo } from '../../core/repos/agents';
import { trunksRepo } from '../../core/repos/trunks';
import type { Knex } from '../../core/db/knex';
import { testDb, truncateAll } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, createExtension, RtpSink, sipp, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { ownNumber, pstnCustomer, startOriginating, type Originating } from '../media-app/originating';
import { party, phoneCallRefused, phoneCalls } from '../xfer/support';

/** The user part of the From of the first INVITE a sipp party received. */
function fromUserOf(messages: string): string {
  const at = messages.search(/^INVITE sip:/m);
  expect(at, 'an INVITE reached the carrier').to.be.at.least(0);
  const m = /^From:[^\r\n]*<sips?:([^@>;]+)@/im.exec(messages.slice(at));
  expect(m, 'From of the INVITE').to.not.equal(null);
  return decodeURIComponent(m![1]!);
}

/** A UDP port the carrier would listen on: counts what arrives (a refused leg must send nothing). */
async function silentCarrier(): Promise<{ port: number; packets: () => number; close: () => void }> {
  const s = dgram.createSocket('udp4');
  let n = 0;
  s.on('message', () => n++);
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return { port: s.address().port, packets: () => n, close: () => s.close() };
}

describe('security: caller id of the PSTN legs media-app dials', function () {
  this.timeout(120_000);
  let o: Originating;
  let p: Platform;
  let db: Knex;

  before(async () => {
    await truncateAll();
    // sipp answers only MD5 challenges (the extension case)
    o = await startOriginating({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' });
    p = o.p;
    db = await testDb();
  });
  after(async () => o?.close());

  const hungUp = (id: string) =>
    until(
      async () => {
        const c = await callsRepo(db).get(id);
        return c?.status === 'hangup' ? c : null;
      },
      20_000,
      `call ${id} hung up`,
    );

  /** The PSTN legs (outgoing, tel) of the customer, once all are hung up. */
  const pstnLegs = (cid: string, n = 1) =>
    until(
      async () => {
        const rows = (await db('calls').where({ customer_id: cid, direction: 'outgoing' })) as CallRow[];
        const tel = rows.filter((r) => r.destination.type === 'tel');
        return tel.length >= n && tel.every((r) => r.status === 'hangup') ? tel : null;
      },
      20_000,
      'PSTN legs hung up',
    );

  /**
   * An outgoing call to a sipp UAS that answers and runs `actions` (a connect to a number, say):
   * the flow's legs are what the test looks at. Resolves when the call has hung up.
   */
  async function runFlow(cid: string, actions: unknown[]): Promise<CallRow> {
    const port = await freePort();
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([...actions, { type: 'hangup' }] as never) } as never);
    const row = await callsRepo(db).create({
      customer_id: cid,
      flow_id: flow.id,
      source: { type: 'sip', target: 'app@example.test' },
      destination: { type: 'sip', target: `callee@127.0.0.1:${port}` },
      direction: 'outgoing',
      status: 'dialing',
      data: {},
    });
    const callee = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    await o.bus.originate([row.id], cid);
    const r = await callee.done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    return hungUp(row.id);
  }

  const connect = (source: Record<string, string> | undefined, target: string) => ({
    type: 'connect',
    option: { ...(source ? { source } : {}), destinations: [{ type: 'tel', target }] },
  });

  it('a flow connect with a spoofed source goes out with the default number', async () => {
    const carrier = await freePort();
    const { cid } = await pstnCustomer(db, carrier);
    const fallback = await ownNumber(db, cid, { asDefault: true });
    const gw = sipp(answeringUas({ final: 486 }), ['-i', '127.0.0.1', '-p', String(carrier), '-m', '1']);
    await runFlow(cid, [connect({ type: 'tel', target: '+14155550123', target_name: 'Bank' }, '+15552220001')]);
    const r = await gw.done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(fromUserOf(r.messages)).to.equal(fallback);
    const [leg] = await pstnLegs(cid);
    // the call record shows what the carrier saw
    expect(leg!.source).to.deep.include({ type: 'tel', target: fallback });
  });

  it('a spoofed source with no default number: the leg is refused (dial_refused source_not_allowed), nothing reaches the carrier', async () => {
    const carrier = await silentCarrier();
    try {
      const { cid } = await pstnCustomer(db, carrier.port);
      await ownNumber(db, cid); // owned, but not the one the flow names, and no default
      await runFlow(cid, [connect({ type: 'tel', target: '+14155550123' }, '+15552220002')]);
      const [leg] = await pstnLegs(cid);
      expect(leg!.data.dial_refused).to.equal('source_not_allowed');
      expect(leg!.hangup_reason).to.equal('failed');
      expect(carrier.packets()).to.equal(0);
    } finally {
      carrier.close();
    }
  });

  it('an owned source goes out as it is; a +899 virtual number of the customer does not', async () => {
    const carrier = await freePort();
    const { cid } = await pstnCustomer(db, carrier);
    const fallback = await ownNumber(db, cid, { asDefault: true });
    const mine = await ownNumber(db, cid);
    await db('numbers').insert({
      id: '6d4b8a1e-0000-4000-8000-000000000899',
      customer_id: cid,
      number: '+899100009999',
      type: 'virtual',
      status: 'active',
      provider_id: '00000000-0000-0000-0000-000000000000',
      call_flow_id: '00000000-0000-0000-0000-000000000000',
      message_flow_id: '00000000-0000-0000-0000-000000000000',
      name: '',
      detail: '',
      tm_create: new Date(),
    });
    const gw = sipp(answeringUas({ final: 486 }), ['-i', '127.0.0.1', '-p', String(carrier), '-m', '2']);
    await runFlow(cid, [connect({ type: 'tel', target: mine }, '+15552220003'), connect({ type: 'tel', target: '+899100009999' }, '+15552220004')]);
    const r = await gw.done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const froms = r.messages
      .split(/^(?=INVITE sip:)/m)
      .slice(1)
      .map(fromUserOf);
    expect(froms).to.deep.equal([mine, fallback]);
  });

  it("forwarding: a leg of an inbound PSTN call keeps that caller's number; an independent call from the same flow does not", async () => {
    const carrier = await freePort();
    const { cid } = await pstnCustomer(db, carrier);
    const fallback = await ownNumber(db, cid, { asDefault: true });
    // the number the carrier calls: its flow forwards the caller (connect with the caller's number,
    // the call's own source), then places an independent call naming the caller's number too
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([
        { type: 'call', option: { source: { type: 'tel', target: '${svc.call.source.target}' }, destinations: [{ type: 'tel', target: '+15552220006' }], actions: [{ type: 'hangup' }] } },
        { type: 'connect', option: { destinations: [{ type: 'tel', target: '+15552220005' }] } },
      ] as never),
    } as never);
    const dialled = await ownNumber(db, cid, { callFlowId: flow.id });
    const gw = sipp(answeringUas({ final: 486 }), ['-i', '127.0.0.1', '-p', String(carrier), '-m', '2']);
    const sink = await RtpSink.open();
    try {
      // the carrier (the provider's address, 127.0.0.1) delivers a call from +15557770042
      // it rings (180) while the flow forwards it; nobody answers: 480
      const rejected = uacWaitsForBye(`${dialled}@127.0.0.1:${p.sipPort}`, '+15557770042', sink.port, { expectStatus: 480 }).replace(
        '<recv response="100" optional="true"/>',
        '<recv response="100" optional="true"/>\n<recv response="180" optional="true"/>',
      );
      const caller = sipp(rejected, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 });
      const [rc, rg] = await Promise.all([caller.done, gw.done]);
      expect(rg.code, rg.errors + rg.messages).to.equal(0);
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
      const invites = rg.messages.split(/^(?=INVITE sip:)/m).slice(1);
      const fromFor = (n: string) => fromUserOf(invites.find((m) => m.startsWith(`INVITE sip:${n}@`)) ?? '');
      expect(fromFor('+15552220005'), 'the forwarded leg').to.equal('+15557770042');
      expect(fromFor('+15552220006'), 'the independent call').to.equal(fallback);
    } finally {
      sink.close();
    }
  });

  it('a connect to an agent whose address is a number: the agent leg is held to the rule too', async () => {
    const carrier = await freePort();
    const { cid } = await pstnCustomer(db, carrier);
    const fallback = await ownNumber(db, cid, { asDefault: true });
    const agent = await agentsRepo(db).create({ customer_id: cid, username: `ag${Date.now()}@example.test`, permission: 16, addresses: [{ type: 'tel', target: '+15552220007' }] });
    const gw = sipp(answeringUas({ final: 486 }), ['-i', '127.0.0.1', '-p', String(carrier), '-m', '1']);
    await runFlow(cid, [{ type: 'connect', option: { source: { type: 'tel', target: '+14155550123' }, destinations: [{ type: 'agent', target: agent.id }] } }]);
    const r = await gw.done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(fromUserOf(r.messages)).to.equal(fallback);
  });

  it('an extension calling a number: the carrier sees the default number, not the extension', async () => {
    const carrier = await freePort();
    const a = await createExtension();
    const { cid } = await pstnCustomer(db, carrier, 1_000_000, a.customerId);
    const fallback = await ownNumber(db, cid, { asDefault: true });
    const gw = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(carrier), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    await new Promise((r) => setTimeout(r, 300));
    const phone = sipp(
      phoneCalls(a.ext.username, a.domain, '+15552220008'),
      [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 40_000 },
    );
    const [rp, rg] = await Promise.all([phone.done, gw.done]);
    expect(rp.code, rp.errors + rp.messages).to.equal(0);
    expect(rg.code, rg.errors + rg.messages).to.equal(0);
    expect(fromUserOf(rg.messages)).to.equal(fallback);
  });

  it('an extension calling a number with no default number: 403, nothing reaches the carrier', async () => {
    const carrier = await silentCarrier();
    try {
      const a = await createExtension();
      await pstnCustomer(db, carrier.port, 1_000_000, a.customerId);
      const r = await sipp(phoneCallRefused(a.ext.username, a.domain, '+15552220009', 403), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password], {
        killAfterMs: 30_000,
      }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(await db('calls').where({ customer_id: a.customerId })).to.have.length(0);
      expect(carrier.packets()).to.equal(0);
    } finally {
      carrier.close();
    }
  });

  it("a REFER to a number: the transfer leg goes out with the default number, not the transferee's address", async () => {
    const carrier = await freePort();
    const { cid } = await pstnCustomer(db, carrier);
    const fallback = await ownNumber(db, cid, { asDefault: true });
    const [xPort, aPort] = [await freePort(), await freePort()];
    const [xSink, aSink] = [await RtpSink.open(), await RtpSink.open()];
    try {
      const gw = sipp(answeringUas({ final: 486 }), ['-i', '127.0.0.1', '-p', String(carrier), '-m', '1']);
      // X is called (its call's source names a number nobody owns); its flow connects A, who transfers X to a number
      const x = sipp(party({ rtpPort: xSink.port, byeTimeoutMs: 40_000 }), ['-i', '127.0.0.1', '-p', String(xPort), '-m', '1'], { killAfterMs: 45_000 });
      const a = sipp(
        party({ rtpPort: aSink.port, referTo: 'sip:+15552220011@sip.test', referAfterMs: 500, referFails: true, byeTimeoutMs: 40_000 }),
        ['-i', '127.0.0.1', '-p', String(aPort), '-m', '1'],
        { killAfterMs: 45_000 },
      );
      const flow = await flowsRepo(db).create({
        customer_id: cid,
        actions: parseActions([{ type: 'connect', option: { destinations: [{ type: 'sip', target: `a@127.0.0.1:${aPort}` }] } }] as never),
      } as never);
      const row = await callsRepo(db).create({
        customer_id: cid,
        flow_id: flow.id,
        source: { type: 'tel', target: '+14155550123' },
        destination: { type: 'sip', target: `x@127.0.0.1:${xPort}` },
        direction: 'outgoing',
        status: 'dialing',
        data: {},
      });
      await o.bus.originate([row.id], cid);
      const rg = await gw.done;
      expect(rg.code, rg.errors + rg.messages).to.equal(0);
      expect(fromUserOf(rg.messages)).to.equal(fallback);
      // the transfer failed (busy): hang the call up, both parties take their BYE
      await until(async () => (await db('transfers').where({ customer_id: cid }).first())?.status === 'failed', 15_000, 'transfer failed');
      await o.bus.toCallOwner({ type: 'call.hangup', callId: row.id });
      const [rx, ra] = await Promise.all([x.done, a.done]);
      expect(rx.code, rx.errors).to.equal(0);
      expect(ra.code, ra.errors).to.equal(0);
    } finally {
      xSink.close();
      aSink.close();
    }
  });

  // last: while the trunk lives, INVITEs from 127.0.0.1 are the trunk's, not the provider's
  it('a trunk calling a number with a From its customer does not own: the carrier sees the default number', async () => {
    const carrier = await freePort();
    const { cid } = await pstnCustomer(db, carrier);
    const fallback = await ownNumber(db, cid, { asDefault: true });
    const trunk = await trunksRepo(db).create(cid, `cid${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const sink = await RtpSink.open();
    try {
      const gw = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(carrier), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
      await new Promise((r) => setTimeout(r, 300));
      const pbx = sipp(uacWaitsForBye(`+15552220010@127.0.0.1:${p.sipPort}`, '+14155550123', sink.port, { hangUpAfterMs: 500 }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], {
        killAfterMs: 40_000,
      });
      const [rp, rg] = await Promise.all([pbx.done, gw.done]);
      expect(rp.code, rp.errors + rp.messages).to.equal(0);
      expect(rg.code, rg.errors + rg.messages).to.equal(0);
      expect(fromUserOf(rg.messages)).to.equal(fallback);
    } finally {
      sink.close();
      await trunksRepo(db).softDelete(trunk.id);
    }
  });
});
