// Dead phones end (issue 52): the media engine's receive watch (media-engine/worker/rx-watch.ts) through
// the call session (media-app/call/dead-party.ts), on real loopback SIP and RTP with sipp. A phone that
// stops sending RTP 2 s into a call connected to a trunk has its call ended within the (test-small)
// MEDIA_INACTIVITY_TIMEOUT_MS: a BYE with `Reason: SIP;cause=408;text="Media timeout"` to it and to the
// far leg, its row hangup_reason media_timeout and hangup_by remote (the dead side), the far leg's row
// hangup_by local. A phone on hold (its sendonly, offered at the start or by re-INVITE mid-call), one
// only listening (recvonly) and one muted by the flow (mute in) send no RTP and stay up past 3× the timeout.
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
import { writeRtpPcap } from '../../testkit/ai/audio';
import { testDb, truncateAll } from '../../testkit/db';
import { freePort, sippMediaPort, udpBound } from '../../testkit/ports';
import { reinvite } from '../../testkit/media-app/sipp-steps';
import { killAllSipp, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { playPcap, receivedRequests, talkingCallee } from '../../testkit/long-calls/dead-parties';
import { loopbackSdp } from '../../testkit/sdp';

const TIMEOUT_MS = 1500;
const REASON = /^Reason:\s*SIP;cause=408;text="Media timeout"\s*$/im;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-timeout-'));
/** A pcap of `ms` of µ-law audio (not silence) for sipp's play_pcap_audio. */
function pcap(name: string, ms: number): string {
  const file = path.join(dir, name);
  writeRtpPcap(file, Buffer.alloc((ms / 1000) * 8000, 0x55));
  return file;
}

describe('a phone that stops sending RTP ends its call (MEDIA_INACTIVITY_TIMEOUT_MS)', function () {
  this.timeout(120_000);
  let p: Platform;
  let cid: string;
  let n = 0;

  before(async () => {
    await truncateAll();
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', MEDIA_INACTIVITY_TIMEOUT_MS: String(TIMEOUT_MS) });
    const db = await testDb();
    cid = (await repos(db).customers.create({ email: `mt${Date.now()}@example.test`, status: 'active', name: 'mt' })).id;
    await trunksRepo(db).create(cid, `mt${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function number(actions: object[]): Promise<string> {
    const db = await testDb();
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions(actions) } as never);
    const num = `+8993000${String(++n).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number: num, type: 'virtual', call_flow_id: flow.id });
    return num;
  }

  const rowsTo = async (target: string): Promise<CallRow[]> => (await testDb())('calls').where({ customer_id: cid }).whereRaw(`destination->>'target' = ?`, [target]);

  async function phone(num: string, o: { steps: string; hangUpAfterMs?: number; sdp?: (s: string) => string }): Promise<{ code: number | null; messages: string; errors: string }> {
    const mp = await sippMediaPort();
    let scenario = uacWaitsForBye(`${num}@127.0.0.1:${p.sipPort}`, '+15551230000', mp, { steps: o.steps, byeTimeoutMs: 15_000, hangUpAfterMs: o.hangUpAfterMs });
    if (o.sdp) scenario = o.sdp(scenario);
    return sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(mp)], { killAfterMs: 40_000 }).done;
  }

  it('a phone silent 2 s into a call to a trunk: both legs get BYE with Reason, the row names the dead side', async () => {
    const portB = await freePort();
    // the trunk (B) talks for 20 s: its leg hears RTP throughout
    const trunk = sipp(talkingCallee(pcap('trunk.pcap', 20_000)), ['-i', '127.0.0.1', '-p', String(portB), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], {
      killAfterMs: 40_000,
    });
    await udpBound(portB); // the trunk has bound its port: the INVITE waits in its socket
    const num = await number([{ type: 'connect', option: { destinations: [{ type: 'sip', target: `b@127.0.0.1:${portB}` }] } }]);
    const t0 = performance.now();
    // the phone (A) talks 2 s, then goes silent (as a phone that died: no RTP, no RTCP) and waits for the BYE
    const a = await phone(num, { steps: playPcap(pcap('phone.pcap', 2000)) });
    const took = performance.now() - t0;
    expect(a.code, a.errors + a.messages).to.equal(0);
    // 2 s of audio, then the timeout (1.5 s) and the watch's period (0.25 s), with room for a loaded machine
    expect(took).to.be.within(2000 + TIMEOUT_MS, 2000 + TIMEOUT_MS + 3500);
    expect(receivedRequests(a.messages, 'BYE')[0]).to.match(REASON);
    const b = await trunk.done;
    expect(b.code, b.errors + b.messages).to.equal(0);
    expect(receivedRequests(b.messages, 'BYE')[0], 'the far leg').to.match(REASON);
    const [rowA] = await until(async () => {
      const r = await rowsTo(num);
      return r[0]?.status === 'hangup' ? r : null;
    }, 5000);
    expect(rowA!.hangup_reason).to.equal('media_timeout');
    expect(rowA!.hangup_by).to.equal('remote');
    const [rowB] = await until(async () => {
      const r = await rowsTo(`b@127.0.0.1:${portB}`);
      return r[0]?.status === 'hangup' ? r : null;
    }, 5000);
    expect(rowB!.hangup_by).to.equal('local');
    await until(() => p.app.calls.get(rowA!.id) === undefined && p.app.calls.get(rowB!.id) === undefined, 3000, 'both sessions gone');
  });

  const HOLD_MS = 3 * TIMEOUT_MS + 500;

  it('a phone that offers sendonly (held) sends no RTP and is not ended past 3× the timeout', async () => {
    const num = await number([{ type: 'answer' }, { type: 'echo', option: { duration: 60_000 } }]);
    const r = await phone(num, { steps: '', hangUpAfterMs: HOLD_MS, sdp: (s) => s.replace('a=sendrecv', 'a=sendonly') });
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(receivedRequests(r.messages, 'BYE')).to.deep.equal([]);
    const [row] = await until(async () => {
      const rows = await rowsTo(num);
      return rows[0]?.status === 'hangup' ? rows : null;
    }, 5000);
    expect(row!.hangup_reason).to.equal('normal');
    expect(row!.hangup_by).to.equal('remote');
  });

  it('a phone only listening (recvonly) is not ended past 3× the timeout', async () => {
    const num = await number([{ type: 'answer' }, { type: 'echo', option: { duration: 60_000 } }]);
    const r = await phone(num, { steps: '', hangUpAfterMs: HOLD_MS, sdp: (s) => s.replace('a=sendrecv', 'a=recvonly') });
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(receivedRequests(r.messages, 'BYE')).to.deep.equal([]);
  });

  it('a party muted by its flow (mute in: only listening) is not ended past 3× the timeout', async () => {
    const num = await number([{ type: 'answer' }, { type: 'mute', option: { direction: 'in' } }, { type: 'echo', option: { duration: 60_000 } }]);
    const r = await phone(num, { steps: '', hangUpAfterMs: HOLD_MS });
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(receivedRequests(r.messages, 'BYE')).to.deep.equal([]);
  });

  it('a phone that puts the call on hold mid-call (re-INVITE sendonly) and goes quiet is not ended', async () => {
    const num = await number([{ type: 'answer' }, { type: 'echo', option: { duration: 60_000 } }]);
    const hold = reinvite(2, loopbackSdp('[media_port]', { version: 2, direction: 'sendonly', events: '0-15' }), { user: '+15551230000' });
    // its BYE comes after the re-INVITE (CSeq 2)
    const r = await phone(num, { steps: `${playPcap(pcap('talk.pcap', 1000))}\n<pause milliseconds="1200"/>\n${hold}`, hangUpAfterMs: HOLD_MS, sdp: (s) => s.replace('CSeq: 2 BYE', 'CSeq: 3 BYE') });
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(receivedRequests(r.messages, 'BYE')).to.deep.equal([]);
  });
});
