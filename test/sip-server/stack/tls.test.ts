// TLS transport with a self-signed certificate made by openssl at test time.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { parseMessage, SipResponse, SipStack, StreamFramer } from '../../../sip-server/stack';
import { freePort } from '../../../testkit/ports';
import { rawRequest, startStack } from './support';
import { attachTestUas } from './test-uas';
import { buildInvite, call, finalOf, inDialog } from './test-uac';

function haveOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('TLS transport', function () {
  this.timeout(30_000);
  let dir: string;
  let stack: SipStack;
  let tlsPort: number;

  before(function () {
    if (!haveOpenssl()) this.skip();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sip-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], {
      stdio: 'ignore',
    });
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    tlsPort = await freePort();
    stack = await startStack({ tls: { certPath: path.join(dir, 'cert.pem'), keyPath: path.join(dir, 'key.pem') }, listen: { tlsPort, transports: ['udp', 'tcp', 'tls'] } });
    attachTestUas(stack);
  });
  afterEach(async () => {
    await stack.stop();
  });

  it('listens on the TLS port and answers OPTIONS on the same connection (Node tls client)', async () => {
    expect(stack.listeningPoint('tls')).to.deep.include({ transport: 'tls', port: tlsPort });
    const sock = tls.connect({ host: '127.0.0.1', port: tlsPort, rejectUnauthorized: false });
    await new Promise<void>((r, j) => {
      sock.once('secureConnect', () => r());
      sock.once('error', j);
    });
    const framer = new StreamFramer();
    const got = new Promise<SipResponse>((resolve) => {
      sock.on('data', (d: Buffer) => {
        for (const ev of framer.push(d)) if (ev.type === 'message') resolve(parseMessage(ev.data, { mode: 'stream' }) as SipResponse);
      });
    });
    const req = rawRequest('OPTIONS', '127.0.0.1', sock.localPort!, tlsPort).replace('SIP/2.0/UDP', 'SIP/2.0/TLS');
    sock.write(req);
    const res = await got;
    expect(res.status).to.equal(200);
    expect(res.topVia!.received).to.equal('127.0.0.1');
    sock.destroy();
  });

  it('a plain-text client on the TLS port does not disturb the server', async () => {
    const net = await import('node:net');
    const s = net.connect(tlsPort, '127.0.0.1');
    await new Promise((r) => s.once('connect', r));
    s.write('OPTIONS sip:x SIP/2.0\r\n\r\n');
    await new Promise((r) => s.once('close', r));
    const sock = tls.connect({ host: '127.0.0.1', port: tlsPort, rejectUnauthorized: false });
    await new Promise<void>((r) => sock.once('secureConnect', () => r()));
    sock.destroy();
  });

  it('stack as UAC calls a stack UAS over TLS (INVITE/ACK/BYE)', async () => {
    const uac = await startStack({ tls: { certPath: path.join(dir, 'cert.pem'), keyPath: path.join(dir, 'key.pem') }, listen: { tlsPort: await freePort(), transports: ['udp', 'tcp', 'tls'] } });
    try {
      const target = `sip:svc@127.0.0.1:${tlsPort};transport=tls`;
      const invite = buildInvite(uac, target, 'tls');
      const res = await call(uac, invite).result;
      expect(res.status).to.equal(200);
      expect(res.source!.transport).to.equal('tls');
      const bye = uac.request(inDialog(invite, res, 'BYE', 2), { target });
      expect((await finalOf(bye)).status).to.equal(200);
    } finally {
      await uac.stop();
    }
  });
});
