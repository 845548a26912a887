// Call quality with a real softphone's RTCP: a baresip 1.0 phone (it sends RTCP SR/RR on RTP port + 1)
// calls a number whose flow answers and waits; the call's `quality` then has an `out` direction,
// which only the phone's receiver reports on our stream can give, with an RTT from their LSR/DLSR.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import type { CallQuality } from '../../core/quality/leg';
import { testDb, truncateAll } from '../../testkit/db';
import { createExtension, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { Baresip } from '../../testkit/baresip';
import { toneWav } from '../edge/audio';

const HAVE_BARESIP = fs.existsSync('/usr/bin/baresip');

(HAVE_BARESIP ? describe : describe.skip)('call quality: RTCP from a baresip phone', function () {
  this.timeout(90_000);
  let p: Platform;
  let phone: Baresip | null = null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quality-baresip-'));

  before(async () => {
    await truncateAll();
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', QUALITY_SAMPLE_MS: '2000' });
  });
  after(async () => {
    await phone?.dispose();
    await p?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the phone's receiver reports give the out direction and an RTT; a clean call scores MOS ≥ 4.3", async () => {
    const a = await createExtension();
    const db = await testDb();
    const flow = await flowsRepo(db).create({
      customer_id: a.customerId,
      actions: parseActions([{ type: 'answer' }, { type: 'sleep', option: { duration: 14_000 } }, { type: 'hangup' }]),
    } as never);
    const number = `+1555${String(Date.now()).slice(-7)}`;
    await numbersRepo(db).create({ customer_id: a.customerId, number, type: 'normal', call_flow_id: flow.id } as never);
    const mic = path.join(dir, 'tone.wav');
    toneWav(mic, 700);
    phone = await Baresip.start({ user: a.ext.username, domain: a.domain, password: a.password, outboundProxy: `sip:127.0.0.1:${p.sipPort}` }, mic);
    await until(async () => (await p.app.registrar.bindings.get(`${a.ext.username}@${a.domain}`)).length > 0 || null, 10_000, 'registered');
    await phone.dial(`sip:${number}@${a.domain}`);
    await until(() => phone!.saw('CALL_CLOSED') || null, 40_000, 'the flow hangs up');
    expect(phone.saw('CALL_ESTABLISHED'), phone.log.slice(-1500)).to.equal(true);
    const row = await until(
      async () => ((await db('calls').where({ customer_id: a.customerId, status: 'hangup' }).whereNotNull('quality').first()) as { quality: CallQuality } | undefined) ?? null,
      10_000,
      'the call quality written',
    );
    const q = row.quality;
    expect(q.codec).to.equal('PCMU');
    expect(q.in, 'what the phone sent').to.not.equal(null);
    expect(q.out, "baresip's RR on our stream").to.not.equal(null);
    expect(q.out!.rtt_ms, 'RTT from LSR/DLSR').to.be.a('number').and.within(0, 100);
    expect(q.out!.loss_pct).to.equal(0);
    expect(q.in!.mos_avg).to.be.at.least(4.3);
    expect(q.out!.mos_avg).to.be.at.least(4.3);
  });
});
