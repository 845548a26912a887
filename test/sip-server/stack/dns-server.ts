// A tiny authoritative DNS server on loopback UDP for RFC 3263 tests: answers A, SRV and NAPTR
// queries from a fixed table (RFC 1035 wire format, RFC 2782 SRV, RFC 3403 NAPTR), NXDOMAIN otherwise.
import dgram from 'node:dgram';

export type DnsRecord =
  | { type: 'A'; address: string }
  | { type: 'SRV'; priority: number; weight: number; port: number; target: string }
  | { type: 'NAPTR'; order: number; preference: number; flags: string; service: string; regexp: string; replacement: string };

const TYPE = { A: 1, SRV: 33, NAPTR: 35 } as const;

function name(n: string): Buffer {
  const parts = n.replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([...parts.map((p) => Buffer.concat([Buffer.from([p.length]), Buffer.from(p)])), Buffer.from([0])]);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function charString(s: string): Buffer {
  return Buffer.concat([Buffer.from([s.length]), Buffer.from(s)]);
}

function rdata(r: DnsRecord): Buffer {
  switch (r.type) {
    case 'A':
      return Buffer.from(r.address.split('.').map(Number));
    case 'SRV':
      return Buffer.concat([u16(r.priority), u16(r.weight), u16(r.port), name(r.target)]);
    case 'NAPTR':
      return Buffer.concat([u16(r.order), u16(r.preference), charString(r.flags), charString(r.service), charString(r.regexp), name(r.replacement)]);
  }
}

export class LoopbackDns {
  /** every question asked, as "TYPE name" */
  readonly queries: string[] = [];

  private constructor(
    private readonly socket: dgram.Socket,
    readonly port: number,
    private readonly zone: Record<string, DnsRecord[]>,
  ) {
    socket.on('message', (msg, rinfo) => {
      const reply = this.answer(msg);
      if (reply) socket.send(reply, rinfo.port, rinfo.address);
    });
  }

  static async start(zone: Record<string, DnsRecord[]>): Promise<LoopbackDns> {
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    return new LoopbackDns(s, s.address().port, zone);
  }

  get server(): string {
    return `127.0.0.1:${this.port}`;
  }

  close(): void {
    this.socket.close();
  }

  private answer(q: Buffer): Buffer | undefined {
    if (q.length < 17) return undefined;
    let i = 12;
    const labels: string[] = [];
    while (i < q.length && q[i] !== 0) {
      labels.push(q.subarray(i + 1, i + 1 + q[i]).toString());
      i += q[i] + 1;
    }
    const qname = labels.join('.').toLowerCase();
    const qtype = q.readUInt16BE(i + 1);
    const question = q.subarray(12, i + 5);
    const typeName = (Object.keys(TYPE) as (keyof typeof TYPE)[]).find((k) => TYPE[k] === qtype) ?? String(qtype);
    this.queries.push(`${typeName} ${qname}`);
    const known = this.zone[qname];
    const answers = (known ?? []).filter((r) => TYPE[r.type] === qtype);
    const header = Buffer.alloc(12);
    header.writeUInt16BE(q.readUInt16BE(0), 0); // id
    header.writeUInt16BE(0x8400 | (known ? 0 : 3), 2); // response, authoritative, NXDOMAIN when unknown
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const rrs = answers.map((r) => {
      const data = rdata(r);
      const fixed = Buffer.alloc(10);
      fixed.writeUInt16BE(TYPE[r.type], 0);
      fixed.writeUInt16BE(1, 2); // IN
      fixed.writeUInt32BE(5, 4); // TTL
      fixed.writeUInt16BE(data.length, 8);
      return Buffer.concat([name(qname), fixed, data]);
    });
    return Buffer.concat([header, question, ...rrs]);
  }
}
