// The UDP transport's send path: an IP literal destination leaves without a DNS lookup (dgram's
// default lookup, dns.lookup, answers a literal only on the next tick and costs a lookup per
// message); a host name is still resolved.
import { expect } from 'chai';
import dgram from 'node:dgram';
import dns from 'node:dns';
import { UdpTransport } from '../../../sip-server/transport/udp';

function receiver(): Promise<{ sock: dgram.Socket; port: number; got: Buffer[] }> {
  const sock = dgram.createSocket('udp4');
  const got: Buffer[] = [];
  sock.on('message', (m) => got.push(m));
  return new Promise((resolve) => sock.bind(0, '127.0.0.1', () => resolve({ sock, port: sock.address().port, got })));
}

async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('UDP transport send', () => {
  const realLookup = dns.lookup;
  let lookups: string[];
  let udp: UdpTransport;
  let rx: Awaited<ReturnType<typeof receiver>>;

  beforeEach(async () => {
    lookups = [];
    // the socket takes dns.lookup when it is created: count what it asks
    (dns as { lookup: unknown }).lookup = (host: string, ...rest: unknown[]) => {
      lookups.push(host);
      return (realLookup as (...a: unknown[]) => void)(host, ...rest);
    };
    udp = new UdpTransport('127.0.0.1', 0, 1 << 20);
    await udp.listen();
    rx = await receiver();
    lookups = []; // bind() looks its address up too: count only the sends
  });
  afterEach(async () => {
    (dns as { lookup: unknown }).lookup = realLookup;
    await udp.close();
    rx.sock.close();
  });

  it('sends to an IP literal without a DNS lookup', async () => {
    await Promise.all([1, 2, 3].map((i) => udp.send(Buffer.from(`m${i}`), '127.0.0.1', rx.port)));
    await until(() => rx.got.length === 3);
    expect(rx.got.map(String).sort()).to.deep.equal(['m1', 'm2', 'm3']);
    expect(lookups).to.deep.equal([]);
  });

  it('still resolves a host name (localhost)', async () => {
    await udp.send(Buffer.from('named'), 'localhost', rx.port);
    await until(() => rx.got.length === 1);
    expect(String(rx.got[0])).to.equal('named');
    expect(lookups).to.deep.equal(['localhost']);
  });

  it('refuses a datagram over 65,507 bytes', async () => {
    let err: Error | undefined;
    await udp.send(Buffer.alloc(65_508), '127.0.0.1', rx.port).catch((e: Error) => {
      err = e;
    });
    expect(err?.message).to.match(/too large for UDP/);
  });
});
