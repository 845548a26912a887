/**
 * The participants' far end for the conference benchmark, in its own process (so its timers do not
 * share the engine's API thread): one UDP socket per participant, each sending a PCMU tone every
 * 20 ms and timestamping every packet the engine sends back. Send-time error = arrival minus the
 * leg's ideal 20 ms grid (by RTP timestamp, anchored at the leg's earliest packet); loss = RTP
 * timestamp slots the engine never filled.
 */
import dgram from 'node:dgram';
import { createCodec } from '../../../media-engine/codecs';
import { encodeG711 } from '../../../core/audio/g711';

interface LegRx {
  arrivals: number[];
  stamps: number[];
}
let sockets: dgram.Socket[] = [];
let rx: LegRx[] = [];
let measuring = false;
/** the participants' codec: PCMU (payload type 0) or G.722 (9, for a 16 kHz room) */
let pt = 0;

const reply = (m: unknown) => process.send!(m);

/** A 20 ms PCMU or G.722 frame of a tone, different per participant so the mixes are not silence. */
function toneFrame(i: number): Buffer {
  const hz = 300 + (i % 40) * 50;
  const rate = pt === 9 ? 16000 : 8000;
  const pcm = Int16Array.from({ length: rate / 50 }, (_, k) => Math.round(1500 * Math.sin((2 * Math.PI * hz * k) / rate)));
  if (pt === 0) return Buffer.from(encodeG711('PCMU', pcm));
  const codec = createCodec('G722');
  const out = new Uint8Array(160);
  const n = codec.encode(pcm, out);
  codec.close();
  return Buffer.from(out.subarray(0, n));
}

type PeerCommand = { cmd: string; n?: number; pt?: number; targets?: number[]; durationMs?: number; warmupMs?: number };

async function onMessage(m: PeerCommand): Promise<void> {
  if (m.cmd === 'open') {
    pt = m.pt ?? 0;
    sockets = [];
    rx = [];
    for (let i = 0; i < m.n!; i++) {
      const s = dgram.createSocket('udp4');
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
      const leg: LegRx = { arrivals: [], stamps: [] };
      rx.push(leg);
      s.on('message', (msg) => {
        if (!measuring || msg.length < 12 || (msg[1]! & 0x7f) !== pt) return;
        leg.arrivals.push(performance.now());
        leg.stamps.push(msg.readUInt32BE(4));
      });
      sockets.push(s);
    }
    reply({ ports: sockets.map((s) => s.address().port) });
  } else if (m.cmd === 'start') {
    const targets = m.targets!;
    const frames = targets.map((_, i) => toneFrame(i));
    let n = 0;
    const start = performance.now();
    const end = start + m.durationMs!;
    setTimeout(() => (measuring = true), m.warmupMs!);
    await new Promise<void>((resolve) => {
      const tick = () => {
        if (performance.now() >= end) return resolve();
        while (performance.now() >= start + (n + 1) * 20) {
          n++;
          for (let i = 0; i < targets.length; i++) {
            const b = Buffer.allocUnsafe(12 + frames[i]!.length);
            b[0] = 0x80;
            b[1] = pt;
            b.writeUInt16BE(n & 0xffff, 2);
            b.writeUInt32BE((n * 160) >>> 0, 4);
            b.writeUInt32BE(1000 + i, 8);
            frames[i]!.copy(b, 12);
            sockets[i]!.send(b, targets[i]!, '127.0.0.1');
          }
        }
        setTimeout(tick, Math.max(0, start + (n + 1) * 20 - performance.now()));
      };
      tick();
    });
    measuring = false;
    const errors: number[] = [];
    let expected = 0;
    let received = 0;
    let heard = 0;
    for (const leg of rx) {
      if (leg.stamps.length < 2) continue;
      heard++;
      const s0 = leg.stamps[0]!;
      const idx = leg.stamps.map((s) => Math.round(((s - s0) >>> 0) / 160));
      let base = Infinity;
      for (let k = 0; k < idx.length; k++) base = Math.min(base, leg.arrivals[k]! - idx[k]! * 20);
      for (let k = 0; k < idx.length; k++) errors.push(leg.arrivals[k]! - idx[k]! * 20 - base);
      expected += Math.max(...idx) + 1;
      received += new Set(idx).size;
      leg.arrivals = [];
      leg.stamps = [];
    }
    errors.sort((a, b) => a - b);
    const pct = (p: number) => (errors.length ? errors[Math.min(errors.length - 1, Math.floor(errors.length * p))]! : 0);
    reply({ p50: pct(0.5), p99: pct(0.99), max: errors[errors.length - 1] ?? 0, lossPct: expected ? ((expected - received) / expected) * 100 : 100, legsHeard: heard });
  } else if (m.cmd === 'close') {
    for (const s of sockets) s.close();
    sockets = [];
    reply({ closed: true });
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
