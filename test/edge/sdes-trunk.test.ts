// An SDES-SRTP trunk with a real SRTP client (issue #22): Debian's baresip 1.0 plays a PBX known by its
// address whose media must be encrypted (`;mediaenc=srtp-mand`: RTP/SAVP with a=crypto, plain offers
// refused), calling a number of a trunk set to `media_encryption: sdes`. rtpengine (real) terminates
// the SRTP; the flow echoes the caller, so the PBX hears its own tone back: audio both ways, decrypted
// and encrypted by both ends. A plain offer from the same trunk is refused (488).
import { expect } from 'chai';
import path from 'node:path';
import { parseActions } from '../../core/flow';
import { repos } from '../../core/repos';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { selfSignedCert, type TestCert } from '../../testkit/tls-cert';
import { testDb } from '../../testkit/db';
import { Rtpengine } from '../../testkit/rtpengine';
import { SIP_DOMAIN, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { toneShare, toneWav } from './audio';
import { Baresip } from '../../testkit/baresip';

describe('SDES-SRTP trunk (baresip with srtp-mand as the PBX)', function () {
  this.timeout(90_000);
  let p: Platform;
  let relay: Rtpengine;
  let dir: TestCert;
  const phones: Baresip[] = [];

  before(async () => {
    relay = await Rtpengine.create();
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RTPENGINE_NG: relay.ng });
    dir = selfSignedCert(); // only for its temporary folder
  });
  after(async () => {
    await Promise.all(phones.map((b) => b.dispose()));
    await p?.close();
    await relay?.dispose();
  });

  async function sdesTrunk() {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `sdes${Date.now()}@example.test`, status: 'active', name: 'sdes' })).id;
    const name = `sdes${process.pid}${Date.now() % 100000}`;
    await trunksRepo(db).create(cid, name, { name: 'pbx', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'], media_encryption: 'sdes' });
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'echo', option: { duration: 4000 } }, { type: 'hangup' }]) } as never);
    const number = `+1555${String(Date.now()).slice(-7)}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'normal', call_flow_id: flow.id } as never);
    return { db, cid, number, domain: `${name}.trunk.${SIP_DOMAIN}` };
  }

  const pbx = async (domain: string, params: string) => {
    const mic = path.join(dir.dir, `tone-${phones.length}.wav`);
    toneWav(mic, 700);
    const b = await Baresip.start({ user: 'pbx', domain, password: '', outboundProxy: `sip:127.0.0.1:${p.sipPort}`, register: false, params }, mic);
    phones.push(b);
    return b;
  };

  it('an SDES call carries audio both ways: the PBX hears its own tone echoed through SRTP', async () => {
    const t = await sdesTrunk();
    const b = await pbx(t.domain, ';mediaenc=srtp-mand');
    await b.dial(`sip:${t.number}@${t.domain}`);
    await until(() => b.saw('CALL_CLOSED') || null, 30_000, 'the flow hangs up').catch((e: Error) => {
      throw new Error(`${e.message}\n${b.log.replace(/\s*\[0:00:\d+\] audio=[^\n]*?\(bit\/s\)/g, '').slice(-3000)}`);
    });
    await b.stop();
    // srtp-mand: baresip accepts only an RTP/SAVP answer with a=crypto, so an established call is an SRTP one
    expect(b.saw('CALL_ESTABLISHED'), b.log.slice(-1500)).to.equal(true);
    expect(toneShare(b.heardWav, 700), 'the PBX hears its 700 Hz tone back').to.be.greaterThan(0.5);
    // the flow's BYE is sent as the call goes 'terminating'; 'hangup' is written once it is answered
    const call = await until(
      async () => {
        const row = await t.db('calls').where({ customer_id: t.cid }).first();
        return row?.status === 'hangup' ? row : null;
      },
      5000,
      'the call row at hangup',
    );
    expect(call).to.include({ direction: 'incoming', status: 'hangup' });
  });

  it('a plain offer from the same trunk is refused: the call never starts', async () => {
    const t = await sdesTrunk();
    const b = await pbx(t.domain, '');
    await b.dial(`sip:${t.number}@${t.domain}`);
    await until(() => b.saw('CALL_CLOSED') || null, 15_000, 'refused');
    expect(b.saw('CALL_ESTABLISHED')).to.equal(false);
    expect(b.log).to.match(/488/);
  });
});
