/**
 * What sending one Twilio `media` message costs the node's main thread, as a text string
 * (`TwilioMessages.media`) or as its bytes (`mediaBytes`, what media-app sends): `--streams` WebSocket
 * clients on this thread (as the node dials its customers' servers, so every frame is masked) send
 * a 20 ms frame each per tick for `--seconds` to a `ws` server in a worker thread; this thread's CPU
 * (/proc, the receiving thread's not counted) per message, the two ways in turn, `--rounds` times.
 *   npx tsx scripts/bench/twilio/media-send.ts [--streams 200] [--seconds 5] [--rounds 3]
 */
import { Worker } from 'node:worker_threads';
import WebSocket from 'ws';
import { TwilioMessages } from '../../../core/streams/twilio';
import { procStat } from '../../../media-engine/worker/proc-stat';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const STREAMS = arg('streams', 200);
const SECONDS = arg('seconds', 5);
const ROUNDS = arg('rounds', 3);

const SERVER = `
const { parentPort } = require('node:worker_threads');
const { WebSocketServer } = require('ws');
let got = 0;
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 }, () => parentPort.postMessage({ port: wss.address().port }));
wss.on('connection', (ws) => ws.on('message', () => got++));
parentPort.on('message', () => parentPort.postMessage({ got }));
`;

/** The main thread's own CPU, ms (its thread id is the process id). */
const mainCpuMs = () => procStat(process.pid, process.pid).cpuMs;

async function main(): Promise<void> {
  const server = new Worker(SERVER, { eval: true });
  const port = await new Promise<number>((r) => server.once('message', (m: { port: number }) => r(m.port)));
  const got = () => new Promise<number>((r) => (server.once('message', (m: { got: number }) => r(m.got)), server.postMessage('got')));
  const clients = await Promise.all(
    Array.from({ length: STREAMS }, () => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate: false });
      return new Promise<WebSocket>((r) => ws.once('open', () => r(ws)));
    }),
  );
  const msgs = clients.map((_, i) => new TwilioMessages({ streamSid: `MZ${String(i).padStart(32, '0')}`, accountSid: 'AC' + '1'.repeat(32), callSid: 'CA' + '2'.repeat(32) }));
  const frame = Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 500 * i) / 8000)));
  const text = { binary: false } as const;
  const ways = {
    string: (i: number, t: number) => clients[i]!.send(msgs[i]!.media('inbound', t, frame)),
    bytes: (i: number, t: number) => clients[i]!.send(msgs[i]!.mediaBytes('inbound', t, frame), text),
  };
  const results: Record<keyof typeof ways, number[]> = { string: [], bytes: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const way of Object.keys(ways) as (keyof typeof ways)[]) {
      const send = ways[way];
      const got0 = await got();
      const cpu0 = mainCpuMs();
      let sent = 0;
      const t0 = performance.now();
      await new Promise<void>((done) => {
        const timer = setInterval(() => {
          const t = performance.now() - t0;
          for (let i = 0; i < STREAMS; i++) send(i, t);
          sent += STREAMS;
          if (t >= SECONDS * 1000) {
            clearInterval(timer);
            done();
          }
        }, 20);
      });
      await new Promise((res) => setTimeout(res, 200));
      const us = ((mainCpuMs() - cpu0) * 1000) / sent;
      results[way].push(us);
      console.log(`round ${r + 1} ${way}: ${sent} messages, ${(await got()) - got0} received, ${us.toFixed(2)} µs of main-thread CPU per message`);
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `\n${STREAMS} streams, ${SECONDS} s a way, ${ROUNDS} rounds (medians): string ${med(results.string).toFixed(2)} µs, bytes ${med(results.bytes).toFixed(2)} µs per message (/proc, 10 ms ticks)`,
  );
  for (const c of clients) c.terminate();
  await server.terminate();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
