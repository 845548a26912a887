// For tests that stall their own thread on purpose (an event loop held as under load) and must tell what the
// stall did from what a far end did: the stall (`stallThread`), and a far end that keeps time meanwhile
// (`pacedSender`: a thread of its own that sends given packets to a loopback port, one every 20 ms on its own
// clock; a late timer sends at once, then keeps the schedule).
import { Worker } from 'node:worker_threads';

/** Blocks this thread for `ms` (its event loop, timers and sockets with it), without using a core. */
export function stallThread(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// binds, posts its port, and on 'go' sends paced by its clock from then; posts 'done' after the last packet
const SENDER = `
const { parentPort, workerData } = require('node:worker_threads');
const dgram = require('node:dgram');
const sock = dgram.createSocket('udp4');
sock.on('error', (e) => parentPort.postMessage({ error: e.message }));
sock.bind(0, '127.0.0.1', () => parentPort.postMessage({ port: sock.address().port }));
parentPort.once('message', () => {
  const t0 = performance.now();
  let i = 0;
  const next = () => {
    if (i === workerData.packets.length) return sock.close(() => parentPort.postMessage('done'));
    sock.send(workerData.packets[i++], workerData.port, '127.0.0.1');
    setTimeout(next, Math.max(0, t0 + i * 20 - performance.now()));
  };
  next();
});
`;

export interface PacedSender {
  /** the sender's own port (the source of its packets) */
  readonly port: number;
  /** starts sending */
  go(): void;
  /** resolves once the last packet went out; rejects if the sender's socket or thread failed */
  readonly done: Promise<void>;
  /** ends the sender's thread (sent or not) */
  stop(): Promise<void>;
}

/** A sender of `packets` to 127.0.0.1:`to` on a thread of its own, bound and waiting for go(). */
export async function pacedSender(packets: readonly Buffer[], to: number): Promise<PacedSender> {
  const worker = new Worker(SENDER, { eval: true, workerData: { packets, port: to } });
  const done = new Promise<void>((resolve, reject) => {
    worker.on('error', reject);
    worker.on('message', (m: unknown) => {
      if (m === 'done') resolve();
      else if (typeof m === 'object' && m !== null && 'error' in m) reject(new Error(`paced sender: ${String(m.error)}`));
    });
    worker.on('exit', (code) => reject(new Error(`paced sender exited (code ${code}) before its last packet`)));
  });
  // a failure before the test awaits `done` is not unhandled: the test reads it there
  done.catch(() => undefined);
  const port = await Promise.race([new Promise<number>((resolve) => worker.once('message', (m: { port: number }) => resolve(m.port))), done.then(() => 0)]);
  return {
    port,
    go: () => worker.postMessage('go'),
    done,
    stop: async () => {
      await worker.terminate();
    },
  };
}
