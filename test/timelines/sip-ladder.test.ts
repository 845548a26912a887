// A call's SIP ladder from what sip-server really sent and received: a sipp caller dials a number
// whose flow answers and connects a second sipp party (a chained outgoing leg with its own Call-ID).
// GET /timelines/calls/{id}/sip-analysis lists both legs' messages in order with addresses, and
// /pcap is a pcap file tcpdump reads, one packet per message. Another customer's call is 404.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { Permission } from '../../core/permissions';
import { createAgent, createFixture } from '../../testkit/api';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { killAllSipp, RtpSink, sipp, sleep, uacWaitsForBye, until } from '../../testkit/media-app/harness';
import { party, startStack, type Stack } from '../xfer/support';
import { bufferBody } from '../../testkit/buffer-body';

interface Msg {
  timestamp: string;
  method: string;
  src_ip: string;
  src_port: number;
  dst_ip: string;
  dst_port: number;
  direction: string;
  transport: string;
  sip_call_id: string;
  raw: string;
}

/** Packets tcpdump reads from a pcap file (one line each with -q). */
function tcpdump(file: Buffer): string[] {
  const p = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pcap-')), 'call.pcap');
  fs.writeFileSync(p, file);
  try {
    return execFileSync('tcpdump', ['-r', p, '-nn', '-q', '-tt'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
      .split('\n')
      .filter(Boolean);
  } finally {
    fs.rmSync(path.dirname(p), { recursive: true, force: true });
  }
}

describe("timelines: a call's SIP ladder and pcap from the captured messages", function () {
  this.timeout(120_000);
  let s: Stack;
  let callId = '';
  let uacCallId = '';

  before(async () => {
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_CAPTURE: 'on' });
    const cid = s.f.customer.id;
    await trunksRepo(s.t.ctx.db).create(cid, `tl${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const px = await freePort();
    const flow = await flowsRepo(s.t.ctx.db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'connect', option: { destinations: [{ type: 'sip', target: `x@127.0.0.1:${px}` }] } }, { type: 'hangup' }]),
    } as never);
    const number = `+8991300${String(Date.now()).slice(-5)}`;
    await numbersRepo(s.t.ctx.db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id } as never);
    const sinkX = await RtpSink.open();
    const sinkA = await RtpSink.open();
    try {
      const x = sipp(party({ rtpPort: sinkX.port, byeTimeoutMs: 30_000 }), ['-i', '127.0.0.1', '-p', String(px), '-m', '1', '-timeout', '40s'], { killAfterMs: 45_000 });
      await sleep(300);
      const a = await sipp(
        uacWaitsForBye(`${number}@127.0.0.1:${s.p.sipPort}`, 'caller', sinkA.port, { hangUpAfterMs: 1500 }),
        [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(await sippMediaPort())],
        { killAfterMs: 40_000 },
      ).done;
      expect(a.code, a.errors + a.messages).to.equal(0);
      expect((await x.done).code).to.equal(0);
      uacCallId = /Call-ID: *(\S+)/i.exec(a.messages)?.[1] ?? '';
    } finally {
      sinkX.close();
      sinkA.close();
    }
    const row = await until(
      async () => (await s.t.ctx.db('calls').where({ customer_id: cid, direction: 'incoming', status: 'hangup' }).first()) as { id: string } | undefined,
      15_000,
      'the inbound call hung up',
    );
    callId = row.id;
    await s.p.capture!.capture.flush();
  });
  after(async () => {
    killAllSipp();
    await s?.close();
  });

  it('sip-analysis: both legs, in order, with direction, addresses and the raw message', async () => {
    const res = await s.api.get(`/timelines/calls/${callId}/sip-analysis`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.rtcp_stats).to.equal(null);
    const msgs = res.body.sip_messages as Msg[];
    const ids = [...new Set(msgs.map((m) => m.sip_call_id))];
    expect(ids, "the caller's Call-ID and the connected leg's").to.have.length(2).and.include(uacCallId);
    const a = msgs.filter((m) => m.sip_call_id === uacCallId);
    const b = msgs.filter((m) => m.sip_call_id !== uacCallId);
    const ladder = (ms: Msg[]) => ms.map((m) => `${m.direction === 'incoming' ? '>' : '<'}${m.method.split(' ')[0]}`);
    // caller leg: what the platform received and answered; connected leg: what it sent
    expect(ladder(a)).to.include.members(['>INVITE', '<200', '>ACK', '>BYE']);
    // a provisional first: the 180 of the ringing, or a 100 when that took over 200 ms (RFC 3261 17.2.1)
    expect(ladder(a)[1]).to.be.oneOf(['<100', '<180']);
    expect(ladder(a)[0]).to.equal('>INVITE');
    expect(ladder(b)[0]).to.equal('<INVITE');
    expect(ladder(b)).to.include.members(['>180', '>200', '<ACK', '<BYE']);
    for (const m of msgs) {
      expect(m.transport).to.equal('udp');
      expect(m.src_ip).to.equal('127.0.0.1');
      expect(m.dst_ip).to.equal('127.0.0.1');
      expect(m.raw).to.match(/^(SIP\/2\.0 \d{3}|[A-Z]+ sip:)/);
      expect(m.raw).to.include(m.sip_call_id);
      expect(m.direction === 'incoming' ? m.dst_port : m.src_port).to.equal(s.p.sipPort);
    }
    const times = msgs.map((m) => Date.parse(m.timestamp));
    expect(times).to.deep.equal([...times].sort((x, y) => x - y));
    expect(msgs[0]!.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('pcap: tcpdump reads one UDP packet per captured message, between the right addresses', async () => {
    const ladder = (await s.api.get(`/timelines/calls/${callId}/sip-analysis`)).body.sip_messages as Msg[];
    const res = await s.api.get(`/timelines/calls/${callId}/pcap`).buffer(true).parse(bufferBody);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/application\/octet-stream/);
    // callers' bytes: an inert attachment (docs/security.md "Customer files")
    expect(res.headers['content-disposition']).to.equal(`attachment; filename="call-${callId}.pcap"; filename*=UTF-8''call-${callId}.pcap`);
    expect(res.headers['x-content-type-options']).to.equal('nosniff');
    expect(res.headers['content-security-policy']).to.equal("default-src 'none'; sandbox");
    const lines = tcpdump(res.body as Buffer);
    expect(lines).to.have.length(ladder.length);
    lines.forEach((l, i) => {
      const m = ladder[i]!;
      expect(l).to.include(`IP ${m.src_ip}.${m.src_port} > ${m.dst_ip}.${m.dst_port}: UDP, length ${Buffer.byteLength(m.raw)}`);
    });
  });

  it("another customer's call is 404; an agent below manager is 403; a bad id is 400", async () => {
    const other = await createFixture(s.t.ctx);
    for (const p of ['sip-analysis', 'pcap']) {
      const r = await request(s.t.app).get(`/v1.0/timelines/calls/${callId}/${p}`).set('Authorization', `Bearer ${other.token}`);
      expect(r.status, p).to.equal(404);
      expect(r.body.error).to.include({ reason: 'CALL_NOT_FOUND' });
    }
    const agent = await createAgent(s.t.ctx, s.f.customer.id, Permission.CustomerAgent);
    const r = await request(s.t.app).get(`/v1.0/timelines/calls/${callId}/sip-analysis`).set('Authorization', `Bearer ${agent.token}`);
    expect(r.status).to.equal(403);
    const bad = await s.api.get('/timelines/calls/not-a-uuid/pcap');
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.have.property('reason');
  });
});
