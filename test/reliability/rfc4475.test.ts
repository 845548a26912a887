// RFC 4475 torture messages, every one of section 3, sent as exact bytes to a running platform
// (sip-server's SipStack + drachtio layer + a media-app node as the application): over UDP, or over
// TCP when the message's own top Via says TCP/TLS. Valid requests must reach the application and be
// answered by it; invalid ones must not reach it, and get 400 (505 for SIP/7.0) when a response can
// be formed, else nothing; stray responses are absorbed. After each message a fresh OPTIONS must be
// answered 200 (liveness). Fixtures: test/reliability/sip/rfc4475.ts.
//
// Most RFC 4475 Vias name 192.0.2.x hosts without rport, so UDP responses go (correctly, RFC 3261
// 18.2.2) to received=127.0.0.1 port 5060, not back to us: what the stack sends is read off a tap on
// the stack's send path instead. Over TCP the responses also come back on the connection.
import dgram from 'node:dgram';
import net from 'node:net';
import { expect } from 'chai';
import type { SipMessage, SipRequest, SipResponse } from '../../sip-server/stack';
import { parseMessage } from '../../sip-server/message';
import { truncateAll } from '../../testkit/db';
import { startPlatform, sleep, type Platform } from '../../testkit/media-app/harness';
import { liveness } from '../../testkit/reliability/sip/fuzz';
import { TORTURE, type TortureCase } from './sip/rfc4475';

interface Sent {
  res: SipResponse;
  dest: { transport: string; address: string; port: number };
}

/** Passive tap: every message the stack sends still goes out; a copy of each response is kept. */
function tapResponses(p: Platform): Sent[] {
  const out: Sent[] = [];
  const s = p.stack as unknown as { sendMessage(m: SipMessage, d: Sent['dest']): Promise<void> };
  const send = s.sendMessage.bind(p.stack);
  s.sendMessage = (m, d) => {
    if (!m.isRequest) out.push({ res: m as SipResponse, dest: d });
    return send(m, d);
  };
  return out;
}

function sendUdp(sock: dgram.Socket, data: Buffer, port: number): Promise<void> {
  return new Promise((r) => sock.send(data, port, '127.0.0.1', () => r()));
}

/** One TCP connection per message; collects the responses that come back on it. */
function sendTcp(port: number, data: Buffer): { replies: number[]; close: () => void; sock: net.Socket } {
  // status codes only: a 400 echoes the request's bad headers (scalar02's CSeq), so it need not parse
  const replies: number[] = [];
  const sock = net.connect(port, '127.0.0.1');
  let buf = Buffer.alloc(0);
  sock.on('error', () => undefined);
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const cl = Number(/content-length:\s*(\d+)/i.exec(buf.toString('latin1', 0, end))?.[1] ?? 0);
      if (buf.length < end + 4 + cl) return;
      const m = /^SIP\/2\.0 (\d{3}) /.exec(buf.toString('latin1', 0, 16));
      if (m) replies.push(Number(m[1]));
      buf = buf.subarray(end + 4 + cl);
    }
  });
  sock.on('connect', () => sock.write(data));
  return { replies, sock, close: () => sock.destroy() };
}

/** ACK for a non-2xx final to an INVITE (RFC 3261 17.1.1.3), so the server transaction ends. */
function ackFor(req: SipRequest, res: SipResponse): Buffer {
  const cseq = res.headers.get('CSeq')!.trim().split(/\s+/)[0];
  return Buffer.from(
    [
      `ACK ${req.uri} SIP/2.0`,
      `Via: ${res.headers.getAll('Via')[0]}`,
      'Max-Forwards: 70',
      `From: ${res.headers.get('From')}`,
      `To: ${res.headers.get('To')}`,
      `Call-ID: ${res.headers.get('Call-ID')}`,
      `CSeq: ${cseq} ACK`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'),
  );
}

/**
 * RFC 3261 17.2.3 server transaction key (top Via branch + sent-by + method) of a parseable request.
 * Some RFC 4475 messages share one (cparam01/cparam02, escnull/regescrt): sent within the
 * transaction's lifetime, the later one is a retransmission and must get the earlier one's answer.
 * Over UDP only: over TCP a non-INVITE server transaction ends with its final (Timer J = 0), so
 * unkscm and novelsc, which share a key too, are two transactions.
 */
function transactionKey(c: TortureCase): string | undefined {
  if (c.kind !== 'request' || c.transport !== 'udp') return undefined;
  try {
    const m = parseMessage(c.data) as SipRequest;
    const v = m.topVia!;
    return `${v.branch}|${v.host}:${v.port ?? 5060}|${m.method === 'ACK' ? 'INVITE' : m.method}`;
  } catch {
    return undefined;
  }
}

interface Outcome {
  name: string;
  reachedApp: boolean;
  finals: number[];
  tcpFinals: number[];
  livenessMs: number;
}

describe('reliability: RFC 4475 torture messages against a running platform', function () {
  this.timeout(120_000);
  let p: Platform;
  let sent: Sent[];
  const app: SipRequest[] = [];
  const outcomes = new Map<string, Outcome>();
  let firstPass = 0; // requests the application saw in the per-message pass

  before(async () => {
    await truncateAll(); // no trunk may claim 127.0.0.1: INVITEs here are from an unknown source
    p = await startPlatform();
    sent = tapResponses(p);
    p.stack.on('request', (req: SipRequest) => app.push(req));
  });
  after(async () => {
    // RFC4475_REPORT=1 prints what each message got (the table in docs/reliability.md)
    if (process.env.RFC4475_REPORT) for (const [n, o] of outcomes) console.log(`${n}\t${o.reachedApp ? 'app' : 'stack'}\t${o.finals.join(',') || '-'}`);
    await p?.close();
  });

  async function run(c: TortureCase): Promise<Outcome> {
    const port = p.sipPort;
    const fromSent = sent.length;
    const fromApp = app.length;
    const udp = dgram.createSocket('udp4');
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
    let tcp: ReturnType<typeof sendTcp> | undefined;
    try {
      if (c.transport === 'tcp') tcp = sendTcp(port, c.data);
      else await sendUdp(udp, c.data, port);
      // what a final answer looks like: anything >= 200 the stack sent since we sent this message
      const finals = (): SipResponse[] =>
        sent
          .slice(fromSent)
          .map((s) => s.res)
          .filter((r) => r.status >= 200);
      const wantAnswer = c.kind === 'request' && !(c.verdict === 'invalid' && c.reject === 'drop');
      const end = Date.now() + (wantAnswer ? 6000 : 600);
      while (Date.now() < end && !(wantAnswer && finals().length)) await sleep(20);
      if (!wantAnswer) await sleep(200);
      const mine = app.slice(fromApp);
      // end INVITE server transactions the way a UAC would: ACK the non-2xx final
      for (const r of finals()) {
        const req = mine.find((q) => q.callId === r.headers.get('Call-ID'));
        if (req?.method === 'INVITE' && r.status >= 300) {
          const ack = ackFor(req, r);
          if (tcp) tcp.sock.write(ack);
          else await sendUdp(udp, ack, port);
        }
      }
      if (tcp) await sleep(50);
      return {
        name: c.name,
        reachedApp: mine.length > 0,
        finals: finals().map((r) => r.status),
        tcpFinals: (tcp?.replies ?? []).filter((s) => s >= 200),
        livenessMs: await liveness(port),
      };
    } finally {
      tcp?.close();
      udp.close();
    }
  }

  it('has all 49 messages of RFC 4475 section 3', () => {
    expect(TORTURE).to.have.length(49);
    expect(new Set(TORTURE.map((c) => c.name)).size).to.equal(49);
    expect(TORTURE.filter((c) => c.transport === 'tcp').map((c) => c.name)).to.include.members(['esc02', 'longreq', 'scalar02', 'trws', 'unkscm']);
  });

  const firstWithKey = new Map<string, string>();
  for (const c of TORTURE) {
    const key = transactionKey(c);
    const earlier = key ? firstWithKey.get(key) : undefined;
    if (key && !earlier) firstWithKey.set(key, c.name);
    const what = earlier ? `a retransmission of ${earlier}` : `${c.verdict} ${c.kind}`;
    it(`${c.section} ${c.name} (${what}, ${c.transport})`, async () => {
      const o = await run(c);
      outcomes.set(c.name, o);
      const ctx = JSON.stringify(o);
      expect(o.livenessMs, `liveness after ${ctx}`).to.be.within(0, 3000);
      if (earlier) {
        // same branch, sent-by and method as an earlier message still in its transaction: the stack
        // answers it from that transaction, with the same final, and the application never sees it
        expect(o.reachedApp, ctx).to.equal(false);
        expect(o.finals, ctx).to.deep.equal(outcomes.get(earlier)!.finals);
        return;
      }
      if (c.kind === 'response') {
        // a response that matches no transaction is absorbed: never answered, never passed on as a request
        expect(o.finals, ctx).to.deep.equal([]);
        expect(o.reachedApp, ctx).to.equal(false);
        return;
      }
      const parserReject = o.finals.length === 1 && !o.reachedApp;
      if (c.verdict === 'valid' || (c.verdict === 'either' && o.reachedApp)) {
        expect(o.reachedApp, `accepted and handed to the application: ${ctx}`).to.equal(true);
        // answered once, by the application (which may itself refuse: unksm2's To is no SIP AOR)
        expect(o.finals.length, `answered once: ${ctx}`).to.equal(1);
        // RFC 3261 §8.2.2 decisions the application makes (media-app/request-checks.ts)
        const appVerdict: Record<string, number> = { unkscm: 416, novelsc: 416, bext01: 420 };
        if (appVerdict[c.name]) expect(o.finals[0], `the application's answer: ${ctx}`).to.equal(appVerdict[c.name]);
      } else if (c.reject === 'drop') {
        expect(o.reachedApp, ctx).to.equal(false);
        expect(o.finals, `no response can be formed: ${ctx}`).to.deep.equal([]);
      } else {
        expect(parserReject, `rejected by the stack: ${ctx}`).to.equal(true);
        expect(o.finals[0], ctx).to.equal(c.reject);
      }
      if (c.transport === 'tcp') expect(o.tcpFinals, `the same answer on the connection: ${ctx}`).to.deep.equal(o.finals);
    });
  }

  it('every message over TCP as well: framed by Content-Length, no crash, still live', async () => {
    const from = (firstPass = app.length);
    for (const c of TORTURE) {
      const t = sendTcp(p.sipPort, c.data);
      await sleep(60);
      t.close();
    }
    expect(await liveness(p.sipPort)).to.be.within(0, 3000);
    // on a stream, dblreq is two messages (RFC 3261 18.3): its INVITE now reaches the application too
    await sleep(300);
    expect(app.slice(from).map((r) => r.callId)).to.include('dblreq.0ha0isnda977644900765@192.0.2.15');
  });

  it('what reached the application is what the RFC describes', () => {
    const byCallId = new Map(app.slice(0, firstPass || app.length).map((r) => [r.callId, r]));
    // dblreq over UDP: the INVITE after the REGISTER's Content-Length is discarded (RFC 3261 18.3)
    expect(byCallId.has('dblreq.0ha0isndaksdj99sdfafnl3lk233412')).to.equal(true);
    expect(byCallId.has('dblreq.0ha0isnda977644900765@192.0.2.15')).to.equal(false);
    const wsinv = byCallId.get('wsinv.ndaksdj@192.0.2.1')!;
    expect(wsinv.vias).to.have.length(3);
    expect(wsinv.maxForwards).to.equal(68);
    expect(wsinv.body.length).to.equal(150);
    const mpart = byCallId.get('3d9485ad0c49859b@Zmx1ZmZ5LW1hYy0xNi5sb2NhbA..')!;
    expect(mpart.body.length).to.equal(553);
    expect(mpart.body.includes(Buffer.from([0x05, 0x00, 0x04, 0x81, 0x80]))).to.equal(true);
    // no invalid request was ever handed up
    for (const c of TORTURE.filter((x) => x.verdict === 'invalid' && x.kind === 'request')) {
      expect(outcomes.get(c.name)?.reachedApp, c.name).to.equal(false);
    }
  });
});
