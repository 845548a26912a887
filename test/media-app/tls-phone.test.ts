// TLS signalling with a real TLS phone (issue #22): Debian's baresip 1.0 registers with digest over
// sip-server's TLS listener only (transport=tls, outbound proxy on the TLS port, the test's own CA),
// and a call from a sipp phone reaches it over that TLS connection, is auto-answered and hung up; it
// calls a sipp phone over TLS in turn (digest on the INVITE) and hangs up.
// (Debian's sipp 3.6 is built without TLS, so baresip is the TLS peer.)
import { expect } from 'chai';
import { selfSignedCert, type TestCert } from '../support/tls-cert';
import { Baresip } from '../support/baresip';
import { freePort, sippMediaPort } from '../support/ports';
import { createExtension, killAllSipp, registerOnly, sipp, sleep, startPlatform, until, type Platform } from './harness';
import { calleePhone, callerPhone } from './phones';

describe('TLS signalling with a real TLS phone (baresip)', function () {
  this.timeout(90_000);
  let p: Platform;
  let cert: TestCert;
  let tlsPort: number;
  const phones: Baresip[] = [];

  before(async () => {
    cert = selfSignedCert();
    // libre (baresip 1.0) gives up on a challenge list that names an algorithm it does not know: MD5 only
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_DIGEST_ALGORITHMS: 'MD5' }, {
      sip: { listen: { transports: ['udp', 'tcp', 'tls'], tlsPort: 0 }, tls: { certPath: cert.certPath, keyPath: cert.keyPath } },
    });
    tlsPort = p.stack.listeningPoint('tls')!.port;
  });
  after(async () => {
    killAllSipp();
    await Promise.all(phones.map((b) => b.stop()));
    await p?.close();
  });

  it('baresip registers over TLS, and a call to its extension arrives over that TLS connection and connects', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const phone = Baresip.start({
      aor: `sip:${b.ext.username}@${b.domain};transport=tls`, password: b.password,
      outbound: `sip:127.0.0.1:${tlsPort};transport=tls`, caFile: cert.certPath,
    });
    phones.push(phone);
    const aor = `${b.ext.username}@${b.domain}`;
    const [binding] = await until(async () => {
      const bs = await p.app.registrar.bindings.get(aor);
      return bs.length ? bs : null;
    }, 15_000, 'baresip registered').catch((e: Error) => { throw new Error(`${e.message}\n${phone.log.slice(-3000)}`); });
    expect(binding!.source.protocol).to.equal('tls');
    const caller = sipp(callerPhone(a.ext.username, a.domain, b.ext.extension, p.sipPort), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    const rc = await caller.done;
    expect(rc.code, `caller ${rc.errors}\n--- baresip:\n${phone.log.slice(-3000)}`).to.equal(0);
    await phone.waitFor(/Call established|established/i, 5000);
    await phone.waitFor(/terminated|closed/i, 5000);
  });

  it('baresip calls over TLS (digest on the INVITE) an extension registered by sipp over UDP, and hangs up', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    const callee = sipp(calleePhone(b.ext.username), ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    await sleep(300);
    const phone = Baresip.start({
      aor: `sip:${a.ext.username}@${a.domain};transport=tls`, password: a.password,
      outbound: `sip:127.0.0.1:${tlsPort};transport=tls`, caFile: cert.certPath,
    });
    phones.push(phone);
    await phone.waitFor(/registered successfully/, 10_000);
    phone.command(`/dial sip:${b.ext.extension}@${a.domain}`);
    await phone.waitFor(/Call established|established/i, 10_000);
    await sleep(500);
    phone.command('/hangup');
    const rc = await callee.done;
    expect(rc.code, `callee ${rc.errors}\n--- baresip:\n${phone.log.slice(-3000)}`).to.equal(0);
  });
});
