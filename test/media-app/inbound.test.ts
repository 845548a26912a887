// Inbound calls end to end: sipp as a trunk calls a virtual number whose flow answers, talks and
// hangs up; the test hears speech in the platform's RTP and reads the Call row and its events.
import { onlyCallHungUp, endedActiveflow } from '../../testkit/call-ends';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { callsRepo } from '../../core/repos/calls';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../../testkit/db';
import { sippMediaPort } from '../../testkit/ports';
import { eventsFor, killAllSipp, RtpSink, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';

describe('media-app inbound calls', function () {
  this.timeout(90_000);
  let p: Platform;

  before(async () => {
    await truncateAll();
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' }); // sipp 3.6 knows only MD5
  });
  after(async () => {
    killAllSipp();
    await p?.close();
  });

  async function customer() {
    return (await repos(await testDb()).customers.create({ email: `in${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'in' })).id;
  }

  it('refuses an INVITE from an unknown source with 403', async () => {
    const sink = await RtpSink.open();
    try {
      const r = await sipp(uacWaitsForBye(`+899100000001@127.0.0.1:${p.sipPort}`, 'stranger', sink.port, { expectStatus: 403 }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1']).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const db = await testDb();
      expect(Number((await db('calls').count({ n: 'id' }))[0]!.n)).to.equal(0);
    } finally {
      sink.close();
    }
  });

  it('a trunk calls a virtual number: answer → talk → hangup, speech on the wire, call row and events right', async () => {
    const db = await testDb();
    const cid = await customer();
    await trunksRepo(db).create(cid, `tr${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'talk', option: { text: 'Hello. Thank you for calling. This is a test of the platform.', language: 'en-US' } }, { type: 'hangup' }]),
    } as never);
    await numbersRepo(db).create({ customer_id: cid, number: '+899100000002', type: 'virtual', call_flow_id: flow.id });
    const sink = await RtpSink.open();
    try {
      const r = await sipp(uacWaitsForBye(`+899100000002@127.0.0.1:${p.sipPort}`, '+15551230000', sink.port), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(sink.packets).to.be.greaterThan(50);
      expect(sink.voiced, `levels ${sink.levels.slice(0, 40).map(Math.round).join(',')}`).to.be.greaterThan(25);
    } finally {
      sink.close();
    }
    const call = await onlyCallHungUp(cid);
    expect(call.direction).to.equal('incoming');
    expect(call.destination).to.deep.include({ type: 'tel', target: '+899100000002' });
    expect(call.source).to.deep.include({ type: 'tel', target: '+15551230000', target_name: 'Trunk Caller' });
    expect(call.hangup_by).to.equal('local');
    expect(call.hangup_reason).to.equal('normal');
    expect(call.activeflow_id).to.not.equal('00000000-0000-0000-0000-000000000000');
    expect(call.flow_id).to.equal(flow.id);
    for (const k of ['tm_ringing', 'tm_progressing', 'tm_hangup'] as const) expect(call[k], k).to.be.instanceOf(Date);
    expect(call.tm_ringing!.getTime()).to.be.at.most(call.tm_progressing!.getTime());
    expect(call.tm_progressing!.getTime()).to.be.at.most(call.tm_hangup!.getTime());
    const events = (await eventsFor(p.redis, call.id)).map((e) => e.event_type);
    expect(events).to.deep.equal(['call_created', 'call_ringing', 'call_progressing', 'call_terminating', 'call_hangup']);
    const last = (await eventsFor(p.redis, call.id)).pop()!;
    expect(last.data).to.include({ status: 'hangup', hangup_reason: 'normal', hangup_by: 'local' });
    // the live map is cleaned right after the hangup row is written
    await until(() => p.app.calls.get(call.id) === undefined, 5000, 'live call map cleaned');
    expect(p.app.calls.get(call.id)).to.equal(undefined);
    expect((await callsRepo(db).get(call.id))!.status).to.equal('hangup');
  });

  it('a trunk calling an unknown number gets 404 and no call is written', async () => {
    await truncateAll(); // this customer's trunk is the only one claiming 127.0.0.1 (several would be 403: docs/security.md)
    const db = await testDb();
    const cid = await customer();
    await trunksRepo(db).create(cid, `tr${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const sink = await RtpSink.open();
    try {
      const r = await sipp(uacWaitsForBye(`+899100000099@127.0.0.1:${p.sipPort}`, 'pbx', sink.port, { expectStatus: 404 }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1']).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(await db('calls').where({ customer_id: cid })).to.have.length(0);
    } finally {
      sink.close();
    }
  });

  it('a trunk authenticating by digest at {domain}.trunk.{SIP_DOMAIN} reaches the number; a wrong password does not', async () => {
    await truncateAll(); // no address-authenticated trunk may match 127.0.0.1 here
    const db = await testDb();
    const cid = await customer();
    await trunksRepo(db).create(cid, 'acme', { name: 't', detail: '', auth_types: ['basic'], username: 'pbx1', password: 'trunk-secret-1', allowed_ips: [] });
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'hangup' }]) } as never);
    await numbersRepo(db).create({ customer_id: cid, number: '+899100000003', type: 'virtual', call_flow_id: flow.id });
    const sink = await RtpSink.open();
    try {
      const ruri = '+899100000003@acme.trunk.sip.test';
      const args = [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', 'pbx1'];
      const bad = await sipp(
        uacWaitsForBye(ruri, 'pbx1', sink.port, { digest: true }).replace(
          /<recv response="100" optional="true"\/>\n<recv response="180"[\s\S]*<\/scenario>/,
          '<recv response="100" optional="true"/>\n<recv response="403"/>\n</scenario>',
        ),
        [...args, '-ap', 'wrong'],
      ).done;
      expect(bad.code, bad.errors + bad.messages).to.equal(0);
      expect(await db('calls').where({ customer_id: cid })).to.have.length(0);
      const good = await sipp(uacWaitsForBye(ruri, 'pbx1', sink.port, { digest: true }), [...args, '-ap', 'trunk-secret-1']).done;
      expect(good.code, good.errors + good.messages).to.equal(0);
    } finally {
      sink.close();
    }
    const rows = await until(
      async () => {
        const r = await db('calls').where({ customer_id: cid });
        return r.length === 1 && r[0].status === 'hangup' ? r : null;
      },
      10_000,
      'call done',
    );
    expect(rows[0]).to.include({ direction: 'incoming', hangup_by: 'local', hangup_reason: 'normal' });
  });

  it('DTMF from the caller (RFC 4733, sipp pcap) reaches digits_receive in the flow', async () => {
    const db = await testDb();
    const cid = await customer();
    await trunksRepo(db).create(cid, `trd${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'digits_receive', option: { duration: 8000, length: 1 } }, { type: 'hangup' }]),
    } as never);
    await numbersRepo(db).create({ customer_id: cid, number: '+899100000005', type: 'virtual', call_flow_id: flow.id });
    const scenario = uacWaitsForBye(`+899100000005@127.0.0.1:${p.sipPort}`, 'pbx', 0)
      .replace('m=audio 0 RTP/AVP 0 101', 'm=audio [media_port] RTP/AVP 0 101')
      .replace(
        '<recv request="BYE" timeout="20000"/>',
        '<pause milliseconds="300"/>\n<nop><action><exec play_pcap_audio="/usr/share/sip-tester/dtmf_2833_5.pcap"/></action></nop>\n<recv request="BYE" timeout="20000"/>',
      );
    const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 30_000 }).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'hangup');
    const af = await endedActiveflow(call.activeflow_id);
    expect(af.variables['svc.call.digits']).to.equal('5');
    // the flow went on to hang up at once: well before the 8 s digit timeout
    expect(call.tm_hangup!.getTime() - call.tm_progressing!.getTime()).to.be.lessThan(6000);
  });
});
