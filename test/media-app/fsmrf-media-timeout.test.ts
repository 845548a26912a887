// Dead phones end on the fsmrf backend too (issue 55, the receive watch of test/media-app/media-timeout.test.ts
// on the switch): media-app arms the leg's watch as the switch's `media_timeout` (FsmrfCallEndpoint.watchRx),
// our switch ends the channel with MEDIA_TIMEOUT when the phone sends no RTP for it, and media-app ends the
// call as on the embedded engine: a BYE with `Reason: SIP;cause=408;text="Media timeout"` to the phone and to
// the bridged trunk, the phone's row media_timeout / hangup_by remote, the trunk's row hangup_by local.
// A phone on hold (its sendonly) sends no RTP and stays up. Real loopback SIP and RTP with sipp; media-app, our switch and sip-servers as real processes' parts.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import type { CallRow } from '../../core/repos/calls';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { eventsFor, killAllSipp, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { playPcap, receivedRequests, talkPcap, talkingCallee } from '../../testkit/long-calls/dead-parties';

const TIMEOUT_MS = 1500;
const REASON = /^Reason:\s*SIP;cause=408;text="Media timeout"\s*$/im;

describe('fsmrf backend: a phone that stops sending RTP ends its call (media_timeout on the switch)', function () {
  this.timeout(120_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsmrf-media-timeout-'));
  let p: Platform;
  let cid: string;

  before(async () => {
    // a quality sample every second: the phone's leg is measured while it talks, before the switch ends it
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', MEDIA_INACTIVITY_TIMEOUT_MS: String(TIMEOUT_MS), QUALITY_SAMPLE_MS: '1000' }, { mediaServer: 'fsmrf' });
    const db = await testDb();
    cid = (await repos(db).customers.create({ email: `fsmt${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'fsmt' })).id;
    await trunksRepo(db).create(cid, `fsmt${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const rowsTo = async (target: string): Promise<CallRow[]> => (await testDb())('calls').where({ customer_id: cid }).whereRaw(`destination->>'target' = ?`, [target]);
  const hungUp = (target: string) =>
    until(async () => {
      const r = await rowsTo(target);
      return r[0]?.status === 'hangup' ? r[0] : null;
    }, 5000);

  it('a phone silent 2 s into a call to a trunk: both legs get BYE with Reason, the row names the dead side', async () => {
    const portB = await freePort();
    // the trunk (B) talks for 20 s: its leg hears RTP throughout
    const trunk = sipp(talkingCallee(talkPcap(dir, 'trunk.pcap', 20_000)), ['-i', '127.0.0.1', '-p', String(portB), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], {
      killAfterMs: 40_000,
    });
    const db = await testDb();
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'connect', option: { destinations: [{ type: 'sip', target: `b@127.0.0.1:${portB}` }] } }]) } as never);
    const num = '+899300100001';
    await numbersRepo(db).create({ customer_id: cid, number: num, type: 'virtual', call_flow_id: flow.id });
    const t0 = performance.now();
    // the phone (A) talks 2 s, then goes silent (as a phone that died: no RTP, no RTCP) and waits for the BYE
    const mp = await sippMediaPort();
    const scenario = uacWaitsForBye(`${num}@127.0.0.1:${p.sipPort}`, '+15551230000', mp, { steps: playPcap(talkPcap(dir, 'phone.pcap', 2000)), byeTimeoutMs: 15_000 });
    const a = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(mp)], { killAfterMs: 40_000 }).done;
    const took = performance.now() - t0;
    expect(a.code, a.errors + a.messages).to.equal(0);
    // 2 s of audio, then the timeout and the watch's period (0.25 s), with room for a CI machine running two
    // shards on two cores (under the phone's own 15 s wait for the BYE); not before
    expect(took).to.be.within(2000 + TIMEOUT_MS, 2000 + TIMEOUT_MS + 9000);
    expect(receivedRequests(a.messages, 'BYE')[0]).to.match(REASON);
    const b = await trunk.done;
    expect(b.code, b.errors + b.messages).to.equal(0);
    expect(receivedRequests(b.messages, 'BYE')[0], 'the far leg').to.match(REASON);
    const rowA = await hungUp(num);
    expect(rowA!.hangup_reason).to.equal('media_timeout');
    expect(rowA!.hangup_by).to.equal('remote');
    // call quality is read from the switch while its channel is up (test/media-app/fsmrf-quality.test.ts):
    // the 1 s samples while the phone talked score what the switch heard (no loss, its jitter: a clean
    // leg's MOS), no RTT or RTCP made up; the switch ended the channel, so the final read finds none,
    // and the final call_quality sample (the one webhooks get) still comes, with nothing in either direction
    const qa = rowA!.quality as { codec: string; in: { mos_min: number; loss_pct: number; jitter_ms: number; rtt_ms: null }; out: null };
    expect([qa.codec, qa.out, qa.in.loss_pct, qa.in.rtt_ms]).to.deep.equal(['PCMU', null, 0, null]);
    expect(qa.in.jitter_ms).to.be.within(0, 15);
    expect(qa.in.mos_min).to.be.at.least(4.3);
    const final = await until(async () => (await eventsFor(p.redis, rowA!.id)).find((e) => e.event_type === 'call_quality' && e.data.final === true) ?? null, 10_000, 'the final call_quality sample');
    expect(final.data).to.include({ final: true, codec: 'PCMU', in: null, out: null });
    const rowB = await hungUp(`b@127.0.0.1:${portB}`);
    expect(rowB!.hangup_by).to.equal('local');
  });

  it('a phone that offers sendonly (held) sends no RTP and is not ended past 3× the timeout', async () => {
    const db = await testDb();
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'sleep', option: { duration: 60_000 } }]) } as never);
    const num = '+899300100002';
    await numbersRepo(db).create({ customer_id: cid, number: num, type: 'virtual', call_flow_id: flow.id });
    const mp = await sippMediaPort();
    const scenario = uacWaitsForBye(`${num}@127.0.0.1:${p.sipPort}`, '+15551230000', mp, { steps: '', byeTimeoutMs: 15_000, hangUpAfterMs: 3 * TIMEOUT_MS + 500 }).replace('a=sendrecv', 'a=sendonly');
    const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(mp)], { killAfterMs: 40_000 }).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(receivedRequests(r.messages, 'BYE')).to.deep.equal([]);
    const row = await hungUp(num);
    expect(row!.hangup_reason).to.equal('normal');
    expect(row!.hangup_by).to.equal('remote');
  });
});
