// Call quality on the fsmrf backend (issue 55): a phone (sipp) calls a number whose flow answers and
// waits; its RTP (sipp's play_pcap_audio, real loopback UDP) leaves out one packet in ten. The switch
// measures the leg (uuid_set_media_stats, uuid_dump: rtp_audio_in_packet_count / _flaw_total /
// _jitter_max_variance, FreeSWITCH's set_stats) and media-app's call quality scores it with the E-model
// the engine's legs get (core/quality/emodel.ts): the call's `quality` and its final `call_quality`
// sample carry the loss and that MOS, the record the switch's jitter (the leg's worst). What the switch has no source for (RTCP's
// round trip, the party's view of our audio) stays null. Jitter injected: quality-jitter-backends.test.ts. Embedded-engine calls: test/observability/quality*.test.ts, unchanged.
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
import { sippMediaPort } from '../../testkit/ports';
import { eventsFor, killAllSipp, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { playPcap } from '../../testkit/long-calls/dead-parties';
import { pcmuPackets, rtpPcap } from '../../testkit/rtp-pcap';
import { emodel, oneWayDelayMs } from '../../core/quality/emodel';

/** 3 s of 20 ms PCMU packets, every tenth (seq 5, 15, ...) left out: 150 sent of sequence numbers, 135 on the wire */
const PACKETS = 150;
const gappedPcap = (file: string): void => {
  const all = pcmuPackets(Buffer.alloc(PACKETS * 160, 0x55), false);
  fs.writeFileSync(
    file,
    rtpPcap(
      all.filter((p) => p.seq % 10 !== 5),
      { ssrc: 0x5a5a0001, srcPort: 0, dstPort: 6000, ipChecksum: true },
    ),
  );
};

describe('fsmrf backend: call quality from the switch (its loss and jitter, the E-model)', function () {
  this.timeout(90_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsmrf-quality-'));
  let p: Platform;
  let cid: string;

  before(async () => {
    // one sample period longer than the call: the record's figures are the final sample's (the whole call)
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', QUALITY_SAMPLE_MS: '60000' }, { mediaServer: 'fsmrf' });
    const db = await testDb();
    cid = (await repos(db).customers.create({ email: `fsq${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'fsq' })).id;
    await trunksRepo(db).create(cid, `fsq${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a caller losing 10 % of its packets: the call's quality has the loss, the switch's jitter and the E-model's MOS, no RTT", async () => {
    const db = await testDb();
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'sleep', option: { duration: 30_000 } }]) } as never);
    const num = '+899300200001';
    await numbersRepo(db).create({ customer_id: cid, number: num, type: 'virtual', call_flow_id: flow.id });
    const pcap = path.join(dir, 'gapped.pcap');
    gappedPcap(pcap);
    const mp = await sippMediaPort();
    // the pcap plays 3 s; the caller hangs up 1 s after its last packet
    const scenario = uacWaitsForBye(`${num}@127.0.0.1:${p.sipPort}`, '+15551230000', mp, { steps: playPcap(pcap), hangUpAfterMs: 4000 });
    const a = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(mp)], { killAfterMs: 30_000 }).done;
    expect(a.code, a.errors + a.messages).to.equal(0);
    const row = await until(async () => {
      const r: CallRow[] = await db('calls').where({ customer_id: cid }).whereRaw(`destination->>'target' = ?`, [num]);
      return r[0]?.status === 'hangup' ? r[0] : null;
    }, 10_000);
    // the platform's E-model over the switch's figures: 15 of 150 missing (10 %); the switch's jitter
    // (√rtp_audio_in_jitter_max_variance, the leg's worst: sipp replays the pcap's even times, a few ms at
    // most) is the record's, no period's (core/quality/leg.ts sampleSwitch)
    const q = row.quality as { codec: string; in: { mos_min: number; mos_avg: number; loss_pct: number; jitter_ms: number; rtt_ms: null }; out: null };
    expect(q.codec).to.equal('PCMU');
    expect(q.out).to.equal(null);
    expect(q.in.loss_pct).to.equal(10);
    expect(q.in.rtt_ms).to.equal(null);
    expect(q.in.jitter_ms).to.be.within(0, 10);
    const final = await until(async () => (await eventsFor(p.redis, row.id)).find((e) => e.event_type === 'call_quality' && e.data.final === true) ?? null, 10_000, 'the final call_quality sample');
    const fin = final.data.in as { mos: number; r_factor: number; loss_pct: number; jitter_ms: null; rtt_ms: null };
    const e = emodel({ codec: 'PCMU', lossPct: 10, oneWayDelayMs: oneWayDelayMs({ rttMs: null, jitterBufferMs: 0, ptimeMs: 20, codec: 'PCMU' }) });
    expect(fin.mos).to.be.closeTo(e.mos, 0.011);
    expect(fin.r_factor).to.be.closeTo(e.r, 0.11);
    expect(fin).to.deep.include({ loss_pct: 10, jitter_ms: null, rtt_ms: null });
    // one sample over the whole call: the record's figures are its
    expect([q.in.mos_min, q.in.mos_avg]).to.deep.equal([fin.mos, fin.mos]);
    expect(final.data.out).to.equal(null);
  });
});
