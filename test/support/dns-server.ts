/**
 * A tiny real DNS server for tests: the DNS wire protocol (RFC 1035) over UDP on 127.0.0.1,
 * answering A and AAAA from a table. A name can carry a sequence of answers: its Nth A query (and
 * Nth AAAA query) gets the Nth entry, the last one repeating, which is how a rebinding attacker's
 * server answers. Unknown names get NXDOMAIN.
 *
 *   const dns = await startDnsServer({ 'loop.test': { a: ['127.0.0.1'] } });
 *   env.EGRESS_DNS_SERVERS = dns.server;              // "127.0.0.1:<port>"
 *   dns.set('rebind.test', [{ a: ['127.0.0.2'] }, { a: ['127.0.0.1'] }]);
 *   dns.queries('rebind.test');                        // A queries seen so far
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { parseIp } from '../../core/net/address';

export interface DnsAnswer {
  a?: string[];
  aaaa?: string[];
}

export interface DnsServer {
  /** "127.0.0.1:<port>", for EGRESS_DNS_SERVERS. */
  server: string;
  port: number;
  set(name: string, answers: DnsAnswer | DnsAnswer[]): void;
  /** How many A queries `name` got. */
  queries(name: string): number;
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let i = offset;
  for (;;) {
    const len = msg[i];
    if (len === undefined) throw new Error('truncated name');
    if (len === 0) return { name: labels.join('.').toLowerCase(), end: i + 1 };
    if (len >= 0xc0) throw new Error('compressed name in a question');
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'));
    i += 1 + len;
  }
}

function rdata(ip: string): Buffer {
  return Buffer.from(parseIp(ip)!.bytes);
}

export async function startDnsServer(table: Record<string, DnsAnswer | DnsAnswer[]> = {}): Promise<DnsServer> {
  const entries = new Map<string, DnsAnswer[]>();
  const counts = new Map<string, { a: number; aaaa: number }>();
  const set = (name: string, answers: DnsAnswer | DnsAnswer[]) => {
    for (const ans of Array.isArray(answers) ? answers : [answers]) {
      for (const ip of ans.a ?? []) if (!net.isIPv4(ip)) throw new Error(`${ip} is not IPv4`);
      for (const ip of ans.aaaa ?? []) if (!net.isIPv6(ip)) throw new Error(`${ip} is not IPv6`);
    }
    entries.set(name.toLowerCase().replace(/\.$/, ''), Array.isArray(answers) ? answers : [answers]);
    counts.set(name.toLowerCase().replace(/\.$/, ''), { a: 0, aaaa: 0 });
  };
  for (const [name, answers] of Object.entries(table)) set(name, answers);

  const sock = dgram.createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    let reply: Buffer;
    try {
      reply = answer(msg);
    } catch {
      return;
    }
    sock.send(reply, rinfo.port, rinfo.address);
  });

  function answer(msg: Buffer): Buffer {
    if (msg.length < 12 || msg.readUInt16BE(4) !== 1) throw new Error('one question expected');
    const { name, end } = readName(msg, 12);
    const qtype = msg.readUInt16BE(end);
    const question = msg.subarray(12, end + 4);
    const list = entries.get(name);
    const records: string[] = [];
    if (list && (qtype === TYPE_A || qtype === TYPE_AAAA)) {
      const c = counts.get(name)!;
      const n = qtype === TYPE_A ? c.a++ : c.aaaa++;
      const e = list[Math.min(n, list.length - 1)]!;
      records.push(...((qtype === TYPE_A ? e.a : e.aaaa) ?? []));
    }
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0); // id
    const rd = msg.readUInt16BE(2) & 0x0100;
    header.writeUInt16BE(0x8000 | 0x0400 | rd | 0x0080 | (list ? 0 : 3), 2); // QR, AA, RD copied, RA, rcode
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const answers = records.map((ip) => {
      const data = rdata(ip);
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0); // pointer to the question's name
      rr.writeUInt16BE(qtype, 2);
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(0, 6); // TTL 0: nothing may cache it
      rr.writeUInt16BE(data.length, 10);
      return Buffer.concat([rr, data]);
    });
    return Buffer.concat([header, question, ...answers]);
  }

  await new Promise<void>((resolve, reject) => {
    sock.once('error', reject);
    sock.bind(0, '127.0.0.1', () => resolve());
  });
  const port = sock.address().port;
  return {
    server: `127.0.0.1:${port}`,
    port,
    set,
    queries: (name) => counts.get(name.toLowerCase().replace(/\.$/, ''))?.a ?? 0,
    close: () => new Promise<void>((resolve) => sock.close(() => resolve())),
  };
}
