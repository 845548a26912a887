// TLS signalling with a real TLS phone (issue #22): Debian's baresip 1.0 registers with digest over
// sip-server's TLS listener only (outbound proxy on the TLS port, a self-signed certificate: baresip 1.0
// does not verify it),
// and a call from a sipp phone reaches it over that TLS connection, is auto-answered and hung up; it
// calls a sipp phone over TLS in turn (digest on the INVITE) and hangs up.
// (Debian's sipp 3.6 is built without TLS, so baresip is the TLS peer.)
import { expect } from 'chai';
import path from 'node:path';
import { selfSignedCert, type TestCert } from '../../testkit/tls-cert';
import { freePort, sippMediaPort, udpBound } from '../../testkit/ports';
import { createExtension, killAllSipp, registerOnly, sipp, sleep, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { callerPhone, answeringPhone } from '../../testkit/media-app/phones';
import { toneWav } from './audio';
import { Baresip } from '../../testkit/baresip';

describe('TLS signalling with a real TLS phone (baresip)', function () {
  this.timeout(90_000);
  let p: Platform;
  let cert: TestCert;
  let tlsPort: number;
  const phones: Baresip[] = [];

  before(async () => {
    cert = selfSignedCert();
    // libre (baresip 1.0) gives up on a challenge list that names an algorithm it does not know: MD5 only
    p = await startPlatform(
      { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_DIGEST_ALGORITHMS: 'MD5' },
      {
        sip: { listen: { transports: ['udp', 'tcp', 'tls'], tlsPort: 0 }, tls: { certPath: cert.certPath, keyPath: cert.keyPath } },
      },
    );
    tlsPort = p.stack.listeningPoint('tls')!.port;
    mic = path.join(cert.dir, 'tone.wav');
    toneWav(mic, 440);
  });
  after(async () => {
    killAllSipp();
    await Promise.all(phones.map((b) => b.dispose()));
    await p?.close();
  });
  let mic: string;
  /** baresip with a TLS-only account: REGISTER and calls through the TLS listener. */
  const tlsPhone = async (e: { ext: { username: string }; domain: string; password: string }) => {
    const b = await Baresip.start({ user: e.ext.username, domain: e.domain, password: e.password, outboundProxy: `sip:127.0.0.1:${tlsPort};transport=tls`, params: '' }, mic);
    phones.push(b);
    return b;
  };

  it('baresip registers over TLS, and a call to its extension arrives over that TLS connection and connects', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const phone = await tlsPhone(b);
    const aor = `${b.ext.username}@${b.domain}`;
    const [binding] = await until(
      async () => {
        const bs = await p.app.registrar.bindings.get(aor);
        return bs.length ? bs : null;
      },
      15_000,
      'baresip registered',
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n${phone.log.slice(-3000)}`);
    });
    expect(binding!.source.protocol).to.equal('tls');
    const caller = sipp(
      callerPhone(a.ext.username, a.domain, b.ext.extension, p.sipPort),
      [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 40_000 },
    );
    const rc = await caller.done;
    expect(rc.code, `caller ${rc.errors}\n--- baresip:\n${phone.log.slice(-3000)}`).to.equal(0);
    await until(() => phone.saw('CALL_ESTABLISHED') && phone.saw('CALL_CLOSED'), 5000, 'baresip: call established, then closed');
  });

  it('baresip calls over TLS (digest on the INVITE) an extension registered by sipp over UDP, and hangs up', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    const callee = await answeringPhone(b, phonePort);
    await udpBound(phonePort); // the callee has bound its port: the INVITE waits in its socket
    const phone = await tlsPhone(a);
    // the registrar's binding, not baresip's REGISTER_OK event: that may fire before the ctrl socket is connected
    await until(async () => (await p.app.registrar.bindings.get(`${a.ext.username}@${a.domain}`)).length > 0 || null, 10_000, 'baresip registered').catch((e: Error) => {
      throw new Error(`${e.message}\n${phone.log.slice(-3000)}`);
    });
    expect((await p.app.registrar.bindings.get(`${a.ext.username}@${a.domain}`))[0]!.source.protocol).to.equal('tls');
    await phone.dial(`sip:${b.ext.extension}@${a.domain}`);
    await until(() => phone.saw('CALL_ESTABLISHED'), 10_000, 'call established');
    await sleep(500);
    await phone.hangup();
    const rc = await callee.done;
    expect(rc.code, `callee ${rc.errors}\n--- baresip:\n${phone.log.slice(-3000)}`).to.equal(0);
  });
});
