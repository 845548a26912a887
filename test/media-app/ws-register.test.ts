// SIP over WebSocket (RFC 7118) end to end: real `ws` clients register with digest through
// sip-server's ws and wss listeners to media-app's registrar; the binding records the transport
// (ws/wss) and the connection it came on; closing the connection removes the binding.
import { expect } from 'chai';
import { selfSignedCert, type TestCert } from '../../testkit/tls-cert';
import { WsSipPhone } from '../support/ws-sip';
import { createExtension, startPlatform, until, type Platform } from '../../testkit/media-app/harness';

describe('SIP over WebSocket: REGISTER over ws and wss', function () {
  this.timeout(60_000);
  let p: Platform;
  let cert: TestCert;
  let wsUrl: string;
  let wssUrl: string;

  before(async () => {
    cert = selfSignedCert();
    p = await startPlatform(
      { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' },
      {
        sip: { listen: { wsPort: 0, wssPort: 0 }, tls: { certPath: cert.certPath, keyPath: cert.keyPath } },
      },
    );
    wsUrl = `ws://127.0.0.1:${p.stack.listeningPoint('ws')!.port}`;
    wssUrl = `wss://127.0.0.1:${p.stack.listeningPoint('wss')!.port}`;
  });
  after(async () => {
    await p?.close();
  });

  it('registers with digest over ws: the binding keeps ;transport=ws and records protocol ws and the flow', async () => {
    const { ext, domain, password } = await createExtension();
    const phone = await WsSipPhone.connect(wsUrl);
    try {
      const ok = await phone.register(ext.username, domain, password);
      expect(ok.status).to.equal(200);
      // RFC 7118 §5: received and rport on the WS Via
      expect(ok.header('via')).to.match(new RegExp(`^SIP/2\\.0/WS ${phone.host};branch=\\S+;rport=\\d+;received=127\\.0\\.0\\.1$|received=127\\.0\\.0\\.1`));
      expect(ok.header('via')).to.match(/rport=\d+/);
      const [b] = await p.app.registrar.bindings.get(`${ext.username}@${domain}`);
      expect(b!.contact).to.equal(`sip:${ext.username}@${phone.host};transport=ws`);
      expect(b!.source.protocol).to.equal('ws');
      expect(b!.source.address).to.equal('127.0.0.1');
    } finally {
      await phone.close();
    }
  });

  it('registers with digest over wss with a certificate the client trusts', async () => {
    const { ext, domain, password } = await createExtension();
    const phone = await WsSipPhone.connect(wssUrl, { ca: cert.cert });
    try {
      const ok = await phone.register(ext.username, domain, password);
      expect(ok.status).to.equal(200);
      expect(ok.header('via')).to.match(/^SIP\/2\.0\/WSS /);
      const [b] = await p.app.registrar.bindings.get(`${ext.username}@${domain}`);
      expect(b!.source.protocol).to.equal('wss');
    } finally {
      await phone.close();
    }
  });

  it('a wrong password over ws gets 403, like any transport', async () => {
    const { ext, domain } = await createExtension();
    const phone = await WsSipPhone.connect(wsUrl);
    try {
      expect((await phone.register(ext.username, domain, 'wrong')).status).to.equal(403);
    } finally {
      await phone.close();
    }
  });

  it('closing the WebSocket removes its binding and keeps the other contacts of the extension', async () => {
    const { ext, domain, password } = await createExtension();
    const aor = `${ext.username}@${domain}`;
    const a = await WsSipPhone.connect(wsUrl);
    const b = await WsSipPhone.connect(wsUrl);
    expect((await a.register(ext.username, domain, password)).status).to.equal(200);
    expect((await b.register(ext.username, domain, password)).status).to.equal(200);
    expect(await p.app.registrar.bindings.get(aor)).to.have.length(2);
    await a.close();
    const left = await until(
      async () => {
        const now = await p.app.registrar.bindings.get(aor);
        return now.length === 1 ? now : null;
      },
      3000,
      "the closed flow's binding to go",
    );
    expect(left[0]!.contact).to.equal(`sip:${ext.username}@${b.host};transport=ws`);
    await b.close();
    await until(async () => (await p.app.registrar.bindings.get(aor)).length === 0, 3000, 'no binding left');
  });

  it('answers a CRLF CRLF keepalive with CRLF (RFC 5626 §4.4.1)', async () => {
    const phone = await WsSipPhone.connect(wsUrl);
    try {
      const pong = phone.wait((m) => m.status === 0, 2000, 'CRLF pong');
      phone.send('\r\n\r\n');
      await pong;
    } finally {
      await phone.close();
    }
  });
});
