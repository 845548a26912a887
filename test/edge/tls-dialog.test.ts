// The TLS variant of test/edge/tcp-phone.test.ts (issue #32 item 3): a phone registered over TLS whose
// Contact names `;transport=tls` and a port nothing listens on (a TLS client seldom takes connections).
// Another extension (sipp over UDP) calls it: the INVITE, the ACK for its 200 and the BYE must come on
// the TLS connection it registered from; a new TLS connection to the Contact is refused. The phone is a
// TLS socket speaking SIP text (sipp in Debian has no TLS; baresip's Contact names its own listener).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import tls from 'node:tls';
import { expect } from 'chai';
import { selfSignedCert, type TestCert } from '../../testkit/tls-cert';
import { freePort } from '../../testkit/ports';
import { parseSip, type SipMsg } from '../support/sip-peer';
import { authorization } from '../media-app/digest-client';
import { SIPP_SDP, createExtension, killAllSipp, sipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { callerPhone } from '../../testkit/media-app/phones';

/** A SIP UA on one TLS connection: Content-Length framing, requests queued for the test. */
class TlsPhone {
  readonly received: SipMsg[] = [];
  private buf = '';
  private constructor(readonly socket: tls.TLSSocket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => this.onData(d));
    socket.on('error', () => undefined);
  }

  static connect(port: number): Promise<TlsPhone> {
    return new Promise((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => resolve(new TlsPhone(s)));
      s.once('error', reject);
    });
  }

  private onData(d: string): void {
    this.buf += d;
    for (;;) {
      this.buf = this.buf.replace(/^(\r\n)+/, '');
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const len = Number(/\r\ncontent-length:\s*(\d+)/i.exec(this.buf.slice(0, end))?.[1] ?? 0);
      if (this.buf.length < end + 4 + len) return;
      this.received.push(parseSip(this.buf.slice(0, end + 4 + len)));
      this.buf = this.buf.slice(end + 4 + len);
    }
  }

  async next(pred: (m: SipMsg) => boolean, what: string, timeoutMs = 10_000): Promise<SipMsg> {
    return until(() => this.received.find(pred), timeoutMs, what);
  }

  send(lines: string[], body = ''): void {
    this.socket.write(`${[...lines, `Content-Length: ${Buffer.byteLength(body)}`].join('\r\n')}\r\n\r\n${body}`);
  }

  get local(): string {
    return `127.0.0.1:${this.socket.localPort}`;
  }

  async register(user: string, domain: string, password: string, contact: string): Promise<number> {
    const callId = randomBytes(6).toString('hex');
    const req = (cseq: number, auth?: string) =>
      this.send([
        `REGISTER sip:${domain} SIP/2.0`,
        `Via: SIP/2.0/TLS ${this.local};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
        'Max-Forwards: 70',
        `From: <sip:${user}@${domain}>;tag=r1`,
        `To: <sip:${user}@${domain}>`,
        `Call-ID: ${callId}`,
        `CSeq: ${cseq} REGISTER`,
        `Contact: ${contact}`,
        'Expires: 600',
        ...(auth ? [auth] : []),
      ]);
    req(1);
    const chal = await this.next((m) => m.status === 401 && m.get('call-id') === callId, '401');
    req(2, authorization(chal.get('www-authenticate')!, user, password, `sip:${domain}`));
    return (await this.next((m) => m.status >= 200 && m.get('cseq') === '2 REGISTER', 'REGISTER answer')).status;
  }

  /** A response to `req` (its Vias, From, To with our tag, Call-ID, CSeq). */
  respond(req: SipMsg, status: string, extra: string[] = [], body = ''): void {
    const to = req.get('to')!;
    this.send(
      [
        `SIP/2.0 ${status}`,
        ...req.headers.filter(([k]) => k === 'via').map(([, v]) => `Via: ${v}`),
        `From: ${req.get('from')}`,
        `To: ${/;tag=/.test(to) ? to : `${to};tag=tlsphone`}`,
        `Call-ID: ${req.get('call-id')}`,
        `CSeq: ${req.get('cseq')}`,
        ...extra,
      ],
      body,
    );
  }

  close(): void {
    this.socket.destroy();
  }
}

describe('edge: a phone registered over TLS, Contact on a port that refuses', function () {
  this.timeout(60_000);
  let p: Platform;
  let cert: TestCert;

  before(async () => {
    cert = selfSignedCert();
    p = await startPlatform(
      { SIP_DIGEST_ALGORITHMS: 'MD5' },
      {
        sip: { listen: { transports: ['udp', 'tcp', 'tls'], tlsPort: 0 }, tls: { certPath: cert.certPath, keyPath: cert.keyPath } },
      },
    );
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    fs.rmSync(cert.dir, { recursive: true, force: true });
  });

  it('the INVITE, the ACK for the 200 and the BYE arrive on the registration connection', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const phone = await TlsPhone.connect(p.stack.listeningPoint('tls')!.port);
    try {
      const contact = `<sip:${b.ext.username}@127.0.0.1:${await freePort()};transport=tls>`;
      expect(await phone.register(b.ext.username, b.domain, b.password, contact)).to.equal(200);
      expect((await p.app.registrar.bindings.get(`${b.ext.username}@${b.domain}`))[0]!.source.protocol).to.equal('tls');
      const caller = sipp(
        callerPhone(a.ext.username, a.domain, b.ext.extension, p.sipPort, { holdMs: 1500 }),
        [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password],
        { killAfterMs: 40_000 },
      );
      const invite = await phone.next((m) => m.method === 'INVITE', 'INVITE');
      const sdp =
        SIPP_SDP.replace(/\[local_ip\]/g, '127.0.0.1')
          .replace('[media_port]', String(await freePort()))
          .replace(/\n/g, '\r\n') + '\r\n';
      phone.respond(invite, '200 OK', [`Contact: ${contact}`, 'Content-Type: application/sdp'], sdp);
      const ack = await phone.next((m) => m.method === 'ACK', 'ACK on the registration connection', 5000);
      expect(ack.get('call-id')).to.equal(invite.get('call-id'));
      const bye = await phone.next((m) => m.method === 'BYE', 'BYE on the registration connection');
      phone.respond(bye, '200 OK');
      const rc = await caller.done;
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
      expect(phone.received.filter((m) => m.method).map((m) => m.method)).to.deep.equal(['INVITE', 'ACK', 'BYE']);
    } finally {
      phone.close();
    }
  });
});
