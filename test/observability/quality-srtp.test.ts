// Call quality of an SDES-SRTP leg (issue 38): Debian's baresip 1.0 as a PBX whose media must be
// encrypted (`;mediaenc=srtp-mand`) calls a number of a trunk set to `media_encryption: sdes`; rtpengine
// (real) terminates the SRTP and SRTCP, the engine sees plain RTP/RTCP. The phone's SRTCP receiver
// reports on our stream must reach the call's quality: an `out` direction and an RTT.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { repos } from '../../core/repos';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import type { CallQuality } from '../../core/quality/leg';
import { testDb } from '../../testkit/db';
import { Rtpengine } from '../../testkit/rtpengine';
import { SIP_DOMAIN, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { Baresip } from '../../testkit/baresip';
import { toneWav } from '../edge/audio';

const HAVE_BARESIP = fs.existsSync('/usr/bin/baresip');

(HAVE_BARESIP ? describe : describe.skip)('call quality of an SDES-SRTP leg (baresip srtp-mand through rtpengine)', function () {
  this.timeout(90_000);
  let p: Platform;
  let relay: Rtpengine;
  let phone: Baresip | null = null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quality-srtp-'));

  before(async () => {
    relay = await Rtpengine.create();
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RTPENGINE_NG: relay.ng, QUALITY_SAMPLE_MS: '2000' });
  });
  after(async () => {
    await phone?.dispose();
    await p?.close();
    await relay?.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the phone's SRTCP receiver reports give the out direction and an RTT", async () => {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `qsrtp${Date.now()}@example.test`, status: 'active', name: 'qsrtp' })).id;
    const name = `qsrtp${process.pid}${Date.now() % 100000}`;
    await trunksRepo(db).create(cid, name, { name: 'pbx', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'], media_encryption: 'sdes' });
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'sleep', option: { duration: 14_000 } }, { type: 'hangup' }]) } as never);
    const number = `+1555${String(Date.now()).slice(-7)}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'normal', call_flow_id: flow.id } as never);
    const mic = path.join(dir, 'tone.wav');
    toneWav(mic, 700);
    const domain = `${name}.trunk.${SIP_DOMAIN}`;
    phone = await Baresip.start({ user: 'pbx', domain, password: '', outboundProxy: `sip:127.0.0.1:${p.sipPort}`, register: false, params: ';mediaenc=srtp-mand' }, mic);
    await phone.dial(`sip:${number}@${domain}`);
    await until(() => phone!.saw('CALL_CLOSED') || null, 40_000, 'the flow hangs up');
    // srtp-mand: only an RTP/SAVP answer with a=crypto is accepted, so an established call is an SRTP one
    expect(phone.saw('CALL_ESTABLISHED'), phone.log.slice(-1500)).to.equal(true);
    const row = await until(
      async () => ((await db('calls').where({ customer_id: cid, status: 'hangup' }).whereNotNull('quality').first()) as { quality: CallQuality } | undefined) ?? null,
      10_000,
      'the call quality written',
    );
    const q = row.quality;
    expect(q.codec).to.equal('PCMU');
    expect(q.in, 'what the phone sent, decrypted by rtpengine').to.not.equal(null);
    expect(q.out, "the phone's SRTCP receiver reports on our stream").to.not.equal(null);
    expect(q.out!.rtt_ms, 'RTT from LSR/DLSR').to.be.a('number').and.within(0, 100);
    expect(q.out!.loss_pct).to.equal(0);
    // a clean call (one more hop through rtpengine; a loaded machine may cost a late packet or two)
    expect(q.in!.mos_avg).to.be.at.least(4.0);
    expect(q.out!.mos_avg).to.be.at.least(4.0);
  });
});
