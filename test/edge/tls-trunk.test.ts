// A TLS-only trunk (issue #22): a PBX known by its address, played by Debian's baresip 1.0 without
// registering, sends its INVITE to the trunk's domain through sip-server's TLS listener only; the
// dialled number's flow answers it, talks, and hangs up over that TLS connection. A stranger's
// address on TLS is refused like on UDP.
import { expect } from 'chai';
import path from 'node:path';
import { parseActions } from '../../core/flow';
import { repos } from '../../core/repos';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { selfSignedCert, type TestCert } from '../../testkit/tls-cert';
import { testDb } from '../../testkit/db';
import { SIP_DOMAIN, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { loudness, toneWav } from './audio';
import { Baresip } from '../../testkit/baresip';

describe('TLS-only trunk (baresip as the PBX)', function () {
  this.timeout(90_000);
  let p: Platform;
  let cert: TestCert;
  let tlsPort: number;
  let mic: string;
  const phones: Baresip[] = [];

  before(async () => {
    cert = selfSignedCert();
    p = await startPlatform(
      { EGRESS_ALLOW_CIDRS: '127.0.0.0/8' },
      {
        sip: { listen: { transports: ['udp', 'tcp', 'tls'], tlsPort: 0 }, tls: { certPath: cert.certPath, keyPath: cert.keyPath } },
      },
    );
    tlsPort = p.stack.listeningPoint('tls')!.port;
    mic = path.join(cert.dir, 'tone.wav');
    toneWav(mic, 440);
  });
  after(async () => {
    await Promise.all(phones.map((b) => b.dispose()));
    await p?.close();
  });

  it("the trunk's INVITE over TLS runs the number's flow: answered, the prompt heard, hung up by the flow", async () => {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `tlstrunk${Date.now()}@example.test`, status: 'active', name: 'tls' })).id;
    const name = `tls${process.pid}${Date.now() % 100000}`;
    await trunksRepo(db).create(cid, name, { name: 'pbx', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'talk', option: { text: 'Thank you for calling over an encrypted trunk. Goodbye.', language: 'en-US' } }, { type: 'hangup' }]),
    } as never);
    const number = `+1555${String(Date.now()).slice(-7)}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'normal', call_flow_id: flow.id } as never);
    const domain = `${name}.trunk.${SIP_DOMAIN}`;
    const pbx = await Baresip.start({ user: 'pbx', domain, password: '', outboundProxy: `sip:127.0.0.1:${tlsPort};transport=tls`, register: false }, mic);
    phones.push(pbx);
    await pbx.dial(`sip:${number}@${domain}`);
    await until(() => pbx.saw('CALL_CLOSED') || null, 30_000, 'the flow hangs up').catch((e: Error) => {
      throw new Error(`${e.message}\n${pbx.log.replace(/\s*\[0:00:\d+\] audio=[^\n]*?\(bit\/s\)/g, '').slice(-3000)}`);
    });
    await pbx.stop();
    expect(pbx.saw('CALL_ESTABLISHED'), pbx.log.slice(-2000)).to.equal(true);
    expect(loudness(pbx.heardWav), 'the PBX hears the prompt').to.be.greaterThan(200);
    const call = await until(
      async () => {
        const c = await db('calls').where({ customer_id: cid }).first();
        return c?.status === 'hangup' ? c : null;
      },
      10_000,
      'the call row ended',
    );
    expect(call).to.include({ direction: 'incoming', hangup_by: 'local' });
    expect(call.flow_id).to.equal(flow.id);
    expect(call.destination).to.deep.include({ type: 'tel', target: number });
  });
});
