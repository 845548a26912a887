/**
 * What rtpengine adds to a relayed leg: per-packet latency and CPU, against the direct plain RTP path
 * in the same run, and how many SRTP legs one rtpengine core carries.
 *   source .data/env && npx tsx scripts/bench/webrtc/relay.ts [--seconds 8] [--legs 50,150]
 *
 * Two real rtpengines on loopback (testkit/rtpengine.ts): A is the platform's (plain RTP on one
 * side, SDES-SRTP on the other: what a relayed SRTP/WebRTC leg costs it), B plays the far end's SRTP
 * stack. Node UDP sockets send 20 ms PCMU-sized packets (172 bytes) carrying their send time:
 *   direct   P ──────────────────────────────▶ Q       (the plain path: the engine's RTP, no relay)
 *   relay    P ──▶ A ─RTP─▶ Q                          (rtpengine forwarding, no crypto)
 *   srtp     P ──▶ A ─SRTP─▶ B ──▶ Q                   (encrypt in A, decrypt in B)
 * Latency = arrival − send time (same clock), one packet stream per path, interleaved in the same run.
 * Capacity: N legs both ways through A→B (each leg: P→Q and Q→P at 50 pps), A's CPU from /proc.
 * Bounded: every phase runs --seconds (default 8), the whole run stays under a minute.
 */
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, type NgParams } from 'rtpengine-client';
import { Rtpengine } from '../../../testkit/rtpengine';
import { audioAddress, plainSdp } from '../../../testkit/srtp-far-end';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};
const SECONDS = Math.min(20, Number(arg('seconds', '8')));
const LEGS = arg('legs', '50,150')
  .split(',')
  .map(Number)
  .filter((n) => n > 0 && n <= 400);

type Addr = { host: string; port: number };

class Party {
  readonly sock = dgram.createSocket('udp4');
  port = 0;
  lat: number[] = [];
  got = 0;
  to: Addr | null = null;
  private seq = 0;
  static async open(): Promise<Party> {
    const p = new Party();
    await new Promise<void>((r) => p.sock.bind(0, '127.0.0.1', r));
    p.port = p.sock.address().port;
    p.sock.on('message', (b) => {
      if (b.length < 20 || (b[0]! & 0xc0) !== 0x80) return;
      p.got++;
      p.lat.push(performance.now() - b.readDoubleBE(12));
    });
    return p;
  }
  send(): void {
    if (!this.to) return;
    const pkt = Buffer.alloc(172, 0xff);
    pkt[0] = 0x80;
    pkt[1] = 0;
    pkt.writeUInt16BE((this.seq = (this.seq + 1) & 0xffff), 2);
    pkt.writeUInt32BE((this.seq * 160) >>> 0, 4);
    pkt.writeUInt32BE(this.port, 8);
    pkt.writeDoubleBE(performance.now(), 12);
    this.sock.send(pkt, this.to.port, this.to.host);
  }
  close(): void {
    this.sock.close();
  }
}

const ng = new Client({ localAddress: '127.0.0.1', localPort: 0, timeout: 3000 });
ng.on('error', () => undefined);
async function cmd(r: Rtpengine, name: 'offer' | 'answer', params: NgParams): Promise<string> {
  const res = await ng[name]({ host: '127.0.0.1', port: r.ngPort }, params);
  if (res.result !== 'ok' || !res.sdp) throw new Error(`${name}: ${res['error-reason'] ?? res.result}`);
  return res.sdp;
}
const plainFlags: NgParams = { 'transport-protocol': 'RTP/AVP', ICE: 'remove', DTLS: 'off' };

/** P ↔ A (↔ B when srtp) ↔ Q: where P and Q send. */
async function wire(id: string, p: Party, q: Party, a: Rtpengine, b: Rtpengine | null): Promise<void> {
  if (!b) {
    const toQ = await cmd(a, 'offer', { 'call-id': id, 'from-tag': 'p', sdp: plainSdp(p.port), ...plainFlags });
    const toP = await cmd(a, 'answer', { 'call-id': id, 'from-tag': 'p', 'to-tag': 'q', sdp: plainSdp(q.port) });
    [p.to, q.to] = [audioAddress(toP), audioAddress(toQ)];
    return;
  }
  const srtpOffer = await cmd(a, 'offer', { 'call-id': id, 'from-tag': 'p', sdp: plainSdp(p.port), 'transport-protocol': 'RTP/SAVP', ICE: 'remove', DTLS: 'off' });
  const toQ = await cmd(b, 'offer', { 'call-id': id, 'from-tag': 'a', sdp: srtpOffer, ...plainFlags });
  const srtpAnswer = await cmd(b, 'answer', { 'call-id': id, 'from-tag': 'a', 'to-tag': 'q', sdp: plainSdp(q.port) });
  const toP = await cmd(a, 'answer', { 'call-id': id, 'from-tag': 'p', 'to-tag': 'b', sdp: srtpAnswer });
  [p.to, q.to] = [audioAddress(toP), audioAddress(toQ)];
}

function cpuSeconds(r: Rtpengine): number {
  const pid = fs.readFileSync(path.join(r.rundir, 'rtpengine.pid'), 'utf8').trim();
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, clock ticks
}

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
};
const ms = (x: number) => `${x.toFixed(3)} ms`;

async function run(parties: Party[], seconds: number, a: Rtpengine): Promise<{ cpuA: number; wall: number; node: number }> {
  for (const p of parties) [p.lat, p.got] = [[], 0];
  const c0 = cpuSeconds(a);
  const n0 = process.cpuUsage();
  const t0 = performance.now();
  let ticks = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      for (const p of parties) p.send();
      if (++ticks >= seconds * 50) {
        clearInterval(timer);
        setTimeout(resolve, 200);
      }
    }, 20);
  });
  const wall = (performance.now() - t0) / 1000;
  const n = process.cpuUsage(n0);
  return { cpuA: cpuSeconds(a) - c0, wall, node: (n.user + n.system) / 1e6 };
}

async function main(): Promise<void> {
  const [a, b] = await Promise.all([Rtpengine.create({ portRange: [50000, 53999] }), Rtpengine.create({ portRange: [54000, 57999] })]);
  const all: Party[] = [];
  const pair = async () => {
    const pq = [await Party.open(), await Party.open()] as const;
    all.push(...pq);
    return pq;
  };
  try {
    console.log(
      `# rtpengine relay benchmark (${new Date().toISOString()}, ${os.cpus().length} vCPU, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} at start)`,
    );
    // 1. latency: one stream per path, interleaved in the same run
    const [dp, dq] = await pair();
    dp.to = { host: '127.0.0.1', port: dq.port };
    const [rp, rq] = await pair();
    await wire('lat-relay', rp, rq, a, null);
    const [sp, sq] = await pair();
    await wire('lat-srtp', sp, sq, a, b);
    await run([dp, rp, sp], SECONDS, a);
    const row = (name: string, q: Party, base?: number) => {
      const p50 = pct(q.lat, 0.5);
      return `| ${name} | ${q.got} | ${ms(p50)} | ${ms(pct(q.lat, 0.99))} | ${base ? `${(p50 / base).toFixed(2)}× (+${ms(p50 - base)})` : '1×'} |`;
    };
    const base = pct(dq.lat, 0.5);
    console.log(`\n## Per-packet latency, one-way, ${SECONDS} s at 50 pps per path\n| path | packets | p50 | p99 | p50 vs direct |\n|---|---|---|---|---|`);
    console.log(row('direct (plain RTP path)', dq));
    console.log(row('through rtpengine, plain → plain', rq, base));
    console.log(row('through rtpengine A (→ SDES-SRTP) and B (SRTP →)', sq, base));
    for (const p of all) p.to = null;

    // 2. capacity: N SRTP legs both ways through A
    console.log(
      `\n## SRTP legs through rtpengine A (both directions at 50 pps each, ${SECONDS} s)\n| legs | packets/s through A | A CPU | A CPU per packet | legs per A core (100 pps a leg) | sender CPU (node) | delivered | p50 | p99 |\n|---|---|---|---|---|---|---|---|---|`,
    );
    for (const n of LEGS) {
      const legs: Party[] = [];
      for (let i = 0; i < n; i++) {
        const [p, q] = await pair();
        await wire(`cap-${n}-${i}`, p, q, a, b);
        legs.push(p, q);
      }
      const r = await run(legs, SECONDS, a);
      const lat = legs.flatMap((l) => l.lat);
      const sent = legs.length * SECONDS * 50;
      const cpu = r.cpuA / r.wall;
      const pps = Math.round(sent / r.wall); // packets actually sent per second (a starved sender stretches the run)
      console.log(
        `| ${n} | ${pps} | ${(cpu * 100).toFixed(1)} % | ${((cpu / pps) * 1e6).toFixed(1)} µs | ${cpu > 0 ? Math.floor(1 / ((cpu / pps) * 100)) : '∞'} | ${((r.node / r.wall) * 100).toFixed(0)} % | ${((lat.length / sent) * 100).toFixed(1)} % | ${ms(pct(lat, 0.5))} | ${ms(pct(lat, 0.99))} |`,
      );
      for (const l of legs) l.to = null;
      // the phase's calls are deleted: the next phase gets the ports
      for (let i = 0; i < n; i++) for (const r of [a, b]) await ng.delete({ host: '127.0.0.1', port: r.ngPort }, { 'call-id': `cap-${n}-${i}` });
    }
    console.log(
      `\nload average at end ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    for (const p of all) p.close();
    ng.close();
    await Promise.all([a.dispose(), b.dispose()]);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
