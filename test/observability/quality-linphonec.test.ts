// Call quality with linphonec 5.1 (issue 38): provisioned from the QR URL like a user's phone, it calls
// a number whose flow answers and waits, playing a tone. liblinphone sends RTCP SR/RR, and with
// `rtcp_xr_enabled` the RTCP-XR VoIP metrics block (RFC 3611 §4.7): its receiver reports must give the
// call's `out` direction and an RTT, with and without XR; the node captures the leg's RTP (RTP_CAPTURE),
// so the call's pcap shows the XR packets the engine received.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import type { CallQuality } from '../../core/quality/leg';
import { type TestApp, type Fixture } from '../../testkit/api';
import { until, type Platform } from '../../testkit/media-app/harness';
import { readPcap } from '../../testkit/pcap-reader';
import { Linphonec } from '../edge/linphonec';
import { toneWav } from '../edge/audio';
import { bufferBody } from '../../testkit/buffer-body';
import { useProvisioningStack } from '../../testkit/provisioning-stack';

const HAVE_LINPHONEC = fs.existsSync('/usr/bin/linphonec');

/** liblinphone's RTCP-XR settings: the VoIP metrics block with its statistics summary and RTT reports. */
const XR = ['rtcp_xr_enabled=1', 'rtcp_xr_rcvr_rtt_mode=all', 'rtcp_xr_rcvr_rtt_max_size=10000', 'rtcp_xr_stat_summary_enabled=1', 'rtcp_xr_voip_metrics_enabled=1'];

(HAVE_LINPHONEC ? describe : describe.skip)('call quality: RTCP (and RTCP-XR) from linphonec', function () {
  this.timeout(120_000);
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let base = '';
  let seq = 0;
  const phones: Linphonec[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quality-linphonec-'));
  const tone = path.join(dir, 'tone.wav');
  toneWav(tone, 700);

  useProvisioningStack((s) => ({ p, t, f, base } = s), {
    platformEnv: { QUALITY_SAMPLE_MS: '2000', RTP_CAPTURE: 'headers', RTP_CAPTURE_MAX_PACKETS: '5000' },
    apiEnv: { SIP_ADVERTISED_HOST: '127.0.0.1' },
  });
  afterEach(async () => {
    await Promise.all(phones.splice(0).map((l) => l.dispose()));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** linphonec (with these [rtp] lines) calls a number whose flow answers, waits 12 s and hangs up; the call's quality. */
  async function callQuality(rtp: string[]): Promise<{ id: string; quality: CallQuality }> {
    const api = (m: 'post' | 'get', url: string) => request(t.app)[m](`/v1.0${url}`).query({ accesskey: f.accesskey });
    const n = `${process.pid % 1000}${++seq}`;
    const ext = (await api('post', '/extensions').send({ extension: `73${n}`, password: `secret-pass-73${n}` })).body as { id: string; username: string; domain_name: string };
    const tok = (await api('post', `/extensions/${ext.id}/provisioning-token`)).body as { token: string };
    const flow = await flowsRepo(t.ctx.db).create({
      customer_id: f.customer.id,
      actions: parseActions([{ type: 'answer' }, { type: 'sleep', option: { duration: 12_000 } }, { type: 'hangup' }]),
    } as never);
    const number = `+1556${String(Date.now()).slice(-7)}`;
    await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number, type: 'normal', call_flow_id: flow.id } as never);
    const l = await Linphonec.start(`${base}/provisioning/extension?token=${tok.token}&format=linphone`, { rtp });
    phones.push(l);
    try {
      await until(async () => (await p.app.registrar.bindings.get(`${ext.username}@${ext.domain_name}`)).length > 0 || null, 20_000, 'linphonec registered');
      const before = Date.now();
      l.send('soundcard use files');
      l.send(`call sip:${number}@${ext.domain_name}`);
      // the files sound card sends audio only while a file plays
      await until(
        async () =>
          (await t.ctx
            .db('calls')
            .where({ customer_id: f.customer.id, status: 'progressing' })
            .where('tm_create', '>=', new Date(before - 1000))
            .first()) ?? null,
        15_000,
        'answered',
      );
      await l.connected();
      l.send(`play ${tone}`);
      const row = await until(
        async () =>
          ((await t.ctx
            .db('calls')
            .where({ customer_id: f.customer.id, status: 'hangup' })
            .where('tm_create', '>=', new Date(before - 1000))
            .whereNotNull('quality')
            .first()) as { id: string; quality: CallQuality } | undefined) ?? null,
        40_000,
        'the call quality written',
      );
      return row;
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${l.log.slice(-2000)}`);
    }
  }

  it("linphonec's receiver reports give the out direction and an RTT", async () => {
    const { quality: q } = await callQuality([]);
    expect(q.in, 'what linphonec sent').to.not.equal(null);
    expect(q.out, "linphonec's RR on our stream").to.not.equal(null);
    expect(q.out!.rtt_ms, 'RTT from LSR/DLSR').to.be.a('number').and.within(0, 100);
    expect(q.out!.loss_pct).to.equal(0);
  });

  it('with rtcp_xr_enabled, its RTCP-XR VoIP metrics reach the engine and the out direction', async () => {
    const { id, quality: q } = await callQuality(XR);
    expect(q.out, "linphonec's reports on our stream").to.not.equal(null);
    expect(q.out!.rtt_ms).to.be.a('number').and.within(0, 100);
    expect(q.out!.loss_pct).to.equal(0);
    // the pcap of the call: XR packets (PT 207) with a VoIP metrics block (BT 7) received by the engine
    const res = await request(t.app).get(`/v1.0/timelines/calls/${id}/pcap`).query({ accesskey: f.accesskey }).buffer(true).parse(bufferBody);
    expect(res.status).to.equal(200);
    /** The SSRCs reported on by the VoIP metrics blocks (BT 7) of a compound RTCP packet's XR packets (PT 207). */
    const voipXrOn = (b: Buffer): number[] => {
      const on: number[] = [];
      for (let at = 0; at + 4 <= b.length; at += 4 * (b.readUInt16BE(at + 2) + 1)) {
        if (b[at + 1] !== 207) continue;
        const end = Math.min(b.length, at + 4 * (b.readUInt16BE(at + 2) + 1));
        for (let bt = at + 8; bt + 8 <= end; bt += 4 * (b.readUInt16BE(bt + 2) + 1)) if (b[bt] === 7) on.push(b.readUInt32BE(bt + 4));
      }
      return on;
    };
    const packets = readPcap(res.body as Buffer).packets.filter((x) => x.proto === 17 && x.payload.length >= 8 && x.payload[0]! >> 6 === 2);
    const xrs = packets.filter((x) => voipXrOn(x.payload).length > 0);
    const types = packets.filter((x) => x.payload[1]! >= 200 && x.payload[1]! <= 207).map((x) => x.payload[1]);
    expect(xrs.length, `RTCP-XR VoIP metrics from linphonec (RTCP packet types seen: ${types.join(',')})`).to.be.greaterThan(0);
    // about our stream: the SSRC of the RTP the platform sends to linphonec's RTP port (its RTCP port − 1)
    const ours = packets.find((x) => x.dstPort === xrs[0]!.srcPort - 1 && x.payload[1]! < 200);
    expect(ours, 'our RTP to linphonec').to.not.equal(undefined);
    expect(voipXrOn(xrs[0]!.payload)).to.include(ours!.payload.readUInt32BE(8));
  });
});
