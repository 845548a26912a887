// Finding 7: SIP destinations taken from customer input go through the egress policy. A sip: URI
// whose host is spelled as an internal address is 400 at the API (naming the field); a name is
// located the way SIP does (RFC 3263: NAPTR, SRV, then A, from a loopback DNS server here) and every
// address checked when the leg is dialled: a refused leg fails with data.dial_refused
// destination_not_allowed and nothing is sent. An INVITE counter on 127.0.0.1 stands for the
// internal host and must receive 0 INVITEs; the parties the platform may reach sit on 127.0.0.2,
// the only range allowed (EGRESS_ALLOW_CIDRS=127.0.0.2/32).
import { expect } from 'chai';
import request from 'supertest';
import type { CallRow } from '../../core/repos/calls';
import { callsRepo } from '../../core/repos/calls';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, killAllSipp, sipp, sleep, until } from '../../testkit/media-app/harness';
import { party, referFailsThenHangUp, startStack, type Stack } from '../xfer/support';
import { InviteCounter } from '../../testkit/queue/sip-parties';
import { LoopbackDns } from '../sip-server/stack/dns-server';
import { SPELLINGS } from './spellings';
import { flowsRepo } from '../../core/repos/flows';
import { parseActions } from '../../core/flow';
import { EgressPolicy } from '../../core/net';
import { platformMetrics } from '../../core/metrics';
import { systemResolver } from '../../core/sip/locate';
import { locateSipDestination } from '../../core/calls/sip-destination';

const ALLOWED = '127.0.0.2';

describe('security: SIP destinations go through the egress policy', function () {
  this.timeout(120_000);
  let s: Stack;
  let dns: LoopbackDns;
  let internal: InviteCounter;
  let okPort: number;
  let openPort: number;

  // Names are only dialled without a port (NAPTR/SRV, whose targets have A records here) and both
  // processes ask the loopback DNS server only: even code without the fix sends no DNS query off
  // this machine (a name with a port would go to the system's getaddrinfo in sip-server).
  before(async () => {
    internal = await InviteCounter.open();
    okPort = await freePort(ALLOWED);
    openPort = await freePort();
    const srv = (port: number, target: string) => [{ type: 'SRV' as const, priority: 1, weight: 1, port, target }];
    dns = await LoopbackDns.start({
      'loop.sipdest.test': [{ type: 'A', address: '127.0.0.1' }],
      'allowed.sipdest.test': [{ type: 'A', address: ALLOWED }],
      '_sip._udp.srv.sipdest.test': srv(internal.port, 'loop.sipdest.test'),
      '_sip._udp.ok.sipdest.test': srv(okPort, 'allowed.sipdest.test'),
      '_sip._udp.open.sipdest.test': srv(openPort, 'loop.sipdest.test'),
      'naptr.sipdest.test': [{ type: 'NAPTR', order: 10, preference: 10, flags: 's', service: 'SIP+D2U', regexp: '', replacement: '_sip._udp.srv.sipdest.test' }],
    });
    s = await startStack({ EGRESS_ALLOW_CIDRS: `${ALLOWED}/32`, EGRESS_DNS_SERVERS: dns.server, SIP_DNS_SERVERS: dns.server });
  });
  after(async () => {
    killAllSipp();
    internal?.close();
    dns?.close();
    await s?.close();
  });

  const sip = (target: string) => ({ type: 'sip', target });
  const legsOf = async (masterId: string) => (await s.t.ctx.db('calls').where({ master_call_id: masterId })) as CallRow[];

  /** A sipp party on the allowed address that answers and waits for the platform's BYE. */
  async function allowedParty(scenario = (rtp: number) => party({ rtpPort: rtp, byeTimeoutMs: 60_000 }), at?: number) {
    const port = at ?? (await freePort(ALLOWED));
    const run = sipp(scenario(await sippMediaPort()), ['-i', ALLOWED, '-p', String(port), '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 });
    await sleep(300);
    return { port, run };
  }

  it('POST /calls, /groupcalls: every literal internal spelling of the host is 400 naming the field; nothing is written', async () => {
    const literals = SPELLINGS.filter((x) => x.kind === 'literal' && x.host);
    expect(literals.length).to.be.greaterThan(15);
    for (const l of literals) {
      const target = `bob@${l.host}:${internal.port}`;
      for (const [path, extra] of [
        ['/calls', {}],
        ['/groupcalls', { ring_method: 'ring_all', answer_method: 'hangup_others' }],
      ] as const) {
        const r = await s.api.post(path, { source: sip('me@example.com'), destinations: [sip(target)], actions: [{ type: 'hangup' }], ...extra });
        expect(r.status, `${path} ${l.label} (${target}): ${JSON.stringify(r.body)}`).to.equal(400);
        expect(r.body.error.details[0], l.label).to.include({ field: 'destinations[0].target', index: 0 });
      }
    }
    expect(await s.t.ctx.db('calls').where({ customer_id: s.f.customer.id })).to.have.length(0);
    expect(internal.count).to.equal(0);
  });

  it('a name resolving to an internal address passes the API but its leg is refused when dialled (POST /calls); an allowed name is dialled', async () => {
    const ok = await allowedParty(undefined, okPort);
    const refusals = async () => (await platformMetrics.egressRefusals.get()).values.reduce((n, v) => n + v.value, 0);
    const before = await refusals();
    const names = ['bob@srv.sipdest.test', 'bob@naptr.sipdest.test', 'bob@srv.sipdest.test;transport=udp'];
    const res = await s.api.post('/calls', { source: sip('me@example.com'), destinations: [...names.map(sip), sip('x@ok.sipdest.test')], actions: [{ type: 'hangup' }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const ids = (res.body.calls as { id: string }[]).map((c) => c.id);
    const rows = await until(
      async () => {
        const r = await Promise.all(ids.map((id) => callsRepo(s.t.ctx.db).get(id)));
        return r.every((c) => c?.status === 'hangup') ? (r as CallRow[]) : null;
      },
      30_000,
      'every call over',
    );
    for (const r of rows.slice(0, 3)) {
      expect(r.data.dial_refused, r.destination.target).to.equal('destination_not_allowed');
      expect(r.hangup_reason).to.equal('failed');
    }
    expect(rows[3]!.data.dial_refused).to.equal(undefined);
    expect(rows[3]!.tm_progressing, 'the allowed party answered').to.be.instanceOf(Date);
    expect((await ok.run.done).code).to.equal(0);
    expect(internal.count).to.equal(0);
    // each refused leg counted in egress_refusals_total, as an HTTP refusal is
    expect((await refusals()) - before).to.be.at.least(3);
  });

  it('flows: a literal internal host in a connect or call action is 400 naming the field (POST /flows, PUT, inline actions)', async () => {
    const connect = (target: string) => [{ type: 'answer' }, { type: 'connect', option: { destinations: [sip('ok@example.com'), sip(target)] } }];
    const call = (target: string) => [{ type: 'call', option: { destinations: [sip(target)], actions: [{ type: 'hangup' }] } }];
    for (const [actions, field] of [
      [connect(`bob@127.1:${internal.port}`), 'actions[1].option.destinations[1].target'],
      [call(`bob@[::ffff:127.0.0.1]:${internal.port}`), 'actions[0].option.destinations[0].target'],
    ] as const) {
      const flows = await s.api.post('/flows', { actions });
      expect(flows.status, JSON.stringify(flows.body)).to.equal(400);
      expect(flows.body.error.details[0]).to.include({ field });
      const calls = await s.api.post('/calls', { source: sip('me@example.com'), destinations: [sip(`x@${ALLOWED}:5060`)], actions });
      expect(calls.status, JSON.stringify(calls.body)).to.equal(400);
      expect(calls.body.error.details[0]).to.include({ field });
    }
    const made = await s.api.post('/flows', { actions: connect('bob@example.com') });
    expect(made.status).to.equal(200);
    const put = await request(s.t.app)
      .put(`/v1.0/flows/${made.body.id}`)
      .set('Authorization', `Bearer ${s.f.token}`)
      .send({ actions: connect('bob@localhost') });
    expect(put.status, JSON.stringify(put.body)).to.equal(400);
    expect(internal.count).to.equal(0);
  });

  it('the flow’s connect and call actions (a flow stored before the check, and names): refused at dial time, 0 INVITEs', async () => {
    const x = await allowedParty();
    const targets = [
      `bob@127.0.0.1:${internal.port}`,
      `bob@127.1:${internal.port}`,
      `bob@0x7f000001:${internal.port}`,
      `bob@localhost:${internal.port}`,
      `bob@[::ffff:127.0.0.1]:${internal.port}`,
      'bob@naptr.sipdest.test',
      'bob@srv.sipdest.test',
    ];
    const flow = await flowsRepo(s.t.ctx.db).create({
      customer_id: s.f.customer.id,
      actions: parseActions([
        ...targets.map((t) => ({ type: 'connect', option: { destinations: [sip(t)] } })),
        { type: 'call', option: { destinations: [sip(`bob@2130706433:${internal.port}`)], actions: [{ type: 'hangup' }] } },
        { type: 'hangup' },
      ]),
    } as never);
    const res = await s.api.post('/calls', { source: sip('me@example.com'), destinations: [sip(`x@${ALLOWED}:${x.port}`)], flow_id: flow.id });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect((await x.run.done).code).to.equal(0);
    const master = res.body.calls[0].id as string;
    const connectLegs = await until(
      async () => {
        const legs = await legsOf(master);
        return legs.length >= targets.length && legs.every((l) => l.status === 'hangup') ? legs : null;
      },
      30_000,
      'connect legs over',
    );
    for (const l of connectLegs) expect(l.data.dial_refused, l.destination.target).to.equal('destination_not_allowed');
    const called = await until(
      async () => {
        const r = (await s.t.ctx.db('calls').where({ customer_id: s.f.customer.id }).whereRaw(`destination->>'target' like ?`, ['bob@2130706433%']).first()) as CallRow | undefined;
        return r?.status === 'hangup' ? r : null;
      },
      20_000,
      'the call action’s leg',
    );
    expect(called.data.dial_refused).to.equal('destination_not_allowed');
    expect(internal.count).to.equal(0);
  });

  it('transfers: the API refuses a literal internal host (400), a REFER to one fails its NOTIFY; 0 INVITEs', async () => {
    const refuses = (rtp: number) => party({ rtpPort: rtp, referTo: `sip:bob@127.0.0.1:${internal.port}`, referAfterMs: 800, byeTimeoutMs: 60_000, referFails: true });
    const a = await allowedParty(refuses);
    const x = await allowedParty();
    const res = await s.api.post('/calls', {
      source: sip('me@example.com'),
      destinations: [sip(`x@${ALLOWED}:${x.port}`)],
      actions: [{ type: 'connect', option: { destinations: [sip(`a@${ALLOWED}:${a.port}`)] } }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const aLeg = await until(async () => (await legsOf(res.body.calls[0].id)).find((l) => l.status === 'progressing'), 20_000, 'A up');
    const api = await s.api.post('/transfers', { transfer_type: 'blind', transferer_call_id: aLeg.id, transferee_addresses: [sip(`bob@127.1:${internal.port}`)] });
    expect(api.status, JSON.stringify(api.body)).to.equal(400);
    expect(api.body.error.details[0]).to.include({ field: 'destinations[0].target' });
    await referFailsThenHangUp(s, res.body.calls[0].id, aLeg.id, a.run, [x.run]);
    expect(internal.count).to.equal(0);
  });

  it('a name with a port: its A record is checked (the policy alone, no call)', async () => {
    const o = { egress: new EgressPolicy({ allowCidrs: [`${ALLOWED}/32`], dnsServers: [dns.server], selfHosts: [] }), resolver: systemResolver([dns.server]) };
    expect(await locateSipDestination(`sip:bob@loop.sipdest.test:${internal.port}`, o)).to.deep.include({ ok: false, reason: 'destination_not_allowed' });
    expect(await locateSipDestination('sip:bob@allowed.sipdest.test:5080', o)).to.deep.equal({
      ok: true,
      hop: { transport: 'udp', address: ALLOWED, port: 5080, uri: `sip:${ALLOWED}:5080;transport=udp` },
    });
    expect(await locateSipDestination('sip:bob@ok.sipdest.test;transport=tcp', o)).to.deep.include({ ok: false });
    expect(await locateSipDestination('sip:bob@ok.sipdest.test', o)).to.deep.include({
      ok: true,
      hop: { transport: 'udp', address: ALLOWED, port: okPort, uri: `sip:${ALLOWED}:${okPort};transport=udp` },
    });
    expect(await locateSipDestination('sip:bob@[::1]:5060', o)).to.deep.include({ ok: false, reason: 'destination_not_allowed' });
    expect(await locateSipDestination('sip:bob@host.sipdest.test;maddr=127.0.0.1', o)).to.deep.include({ ok: false, reason: 'destination_not_allowed' });
  });

  it('with the range allowed (EGRESS_ALLOW_CIDRS) the same name is dialled: the INVITE reaches the checked address', async () => {
    const uas = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(openPort), '-m', '1'], { killAfterMs: 30_000 });
    await sleep(300);
    const open = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', EGRESS_DNS_SERVERS: dns.server, SIP_DNS_SERVERS: dns.server });
    try {
      const res = await open.api.post('/calls', { source: sip('me@example.com'), destinations: [sip('bob@open.sipdest.test')], actions: [{ type: 'hangup' }] });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const r = await uas.done;
      expect(r.code, r.errors).to.equal(0);
      expect(r.messages).to.match(/INVITE sip:bob@open\.sipdest\.test/);
    } finally {
      await open.close();
    }
  });
});
