/**
 * The far end for the media benchmark, in its own process: one UDP socket per leg, sends a G.711
 * packet to every leg each 20 ms and timestamps every packet the engine sends back, to measure
 * the engine's send-time error and loss. Also serves as the echo server of the raw-UDP baseline.
 */
import dgram from 'node:dgram';

let sockets: dgram.Socket[] = [];
interface LegRx {
  base: number | null; // min over packets of (arrival - 20 ms * index)
  firstSeq: number | null;
  maxSeq: number;
  count: number;
  arrivals: number[];
  seqs: number[];
}
let rx: LegRx[] = [];
let measuring = false;

function send(m: unknown) {
  process.send!(m);
}

type PeerCommand = { cmd: string; n?: number; targets?: number[]; durationMs?: number; warmupMs?: number };

async function onMessage(m: PeerCommand): Promise<void> {
  if (m.cmd === 'open') {
    sockets = [];
    rx = [];
    for (let i = 0; i < m.n!; i++) {
      const s = dgram.createSocket('udp4');
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
      try {
        s.setRecvBufferSize(1 << 20);
      } catch {
        /* capped */
      }
      const leg: LegRx = { base: null, firstSeq: null, maxSeq: 0, count: 0, arrivals: [], seqs: [] };
      rx.push(leg);
      s.on('message', (msg) => {
        if (!measuring || msg.length < 12) return;
        const t = performance.now();
        if (msg[1] & 0x7f) return; // only PCMU audio packets
        leg.arrivals.push(t);
        leg.seqs.push(msg.readUInt32BE(4)); // RTP timestamp: the sender's clock
        leg.count++;
      });
      sockets.push(s);
    }
    send({ ports: sockets.map((s) => s.address().port) });
  } else if (m.cmd === 'start') {
    const targets = m.targets!;
    const payload = Buffer.alloc(160, 0xff);
    // 500 phones do not send in step: leg i sends at its own offset (i mod 4) x 5 ms within each 20 ms,
    // so the engine sees the packet arrivals a real far end would give it, and the sends here do not
    // hold up the timestamping of the engine's packets for a whole burst
    const PHASES = 4;
    const SUB = 20 / PHASES;
    const sent = new Uint32Array(targets.length);
    const start = performance.now();
    let k = 0;
    const end = start + m.durationMs!;
    setTimeout(() => (measuring = true), m.warmupMs!);
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        if (now >= end) return resolve();
        while (performance.now() >= start + (k + 1) * SUB) {
          const phase = k % PHASES;
          k++;
          for (let i = phase; i < targets.length; i += PHASES) {
            const n = sent[i]++;
            const b = Buffer.allocUnsafe(172);
            b[0] = 0x80;
            b[1] = 0;
            b.writeUInt16BE(n & 0xffff, 2);
            b.writeUInt32BE((n * 160) >>> 0, 4);
            b.writeUInt32BE(1000 + i, 8);
            payload.copy(b, 12);
            sockets[i].send(b, targets[i], '127.0.0.1');
          }
        }
        setTimeout(tick, Math.max(0, start + (k + 1) * SUB - performance.now()));
      };
      tick();
    });
    measuring = false;
    // send-time error: each packet's arrival vs the ideal 20 ms grid of its leg (by RTP timestamp)
    const legsHeard = rx.filter((l) => l.count > 0).length;
    const errors: number[] = [];
    let expected = 0;
    let received = 0;
    for (const leg of rx) {
      if (leg.seqs.length < 2) continue;
      const s0 = leg.seqs[0];
      let base = Infinity;
      const idx = leg.seqs.map((s) => Math.round(((s - s0) >>> 0) / 160));
      for (let k = 0; k < idx.length; k++) base = Math.min(base, leg.arrivals[k] - idx[k] * 20);
      for (let k = 0; k < idx.length; k++) errors.push(leg.arrivals[k] - idx[k] * 20 - base);
      const span = Math.max(...idx) + 1;
      expected += span;
      received += new Set(idx).size;
    }
    for (const leg of rx) {
      leg.arrivals = [];
      leg.seqs = [];
      leg.count = 0;
    }
    errors.sort((a, b) => a - b);
    const pct = (p: number) => (errors.length ? errors[Math.min(errors.length - 1, Math.floor(errors.length * p))] : 0);
    send({ p50: pct(0.5), p99: pct(0.99), max: errors[errors.length - 1] ?? 0, expected, received, lossPct: expected ? ((expected - received) / expected) * 100 : 100, legsHeard });
  } else if (m.cmd === 'close') {
    for (const s of sockets) s.close();
    sockets = [];
    send({ closed: true });
  } else if (m.cmd === 'echo') {
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    s.on('message', (msg, r) => s.send(msg, r.port, r.address));
    sockets.push(s);
    send({ port: s.address().port });
  } else if (m.cmd === 'exit') {
    process.exit(0);
  }
}

// A failed command ends the peer loudly: the parent sees it exit and stops the run.
process.on('message', (m: PeerCommand) => {
  onMessage(m).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
});

// the benchmark was interrupted: do not outlive it
process.on('disconnect', () => process.exit(0));
