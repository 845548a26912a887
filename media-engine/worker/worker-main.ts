/**
 * Entry point of a media worker thread: runs an Engine and answers the API thread's messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { configureSources } from './source-resolver';
import { Engine } from './engine';
import type { FromWorker, ToWorker } from './protocol';

if (!parentPort) throw new Error('media-engine worker must run in a worker thread');
const port = parentPort;
configureSources((workerData ?? {}) as Parameters<typeof configureSources>[0]);
const post = (m: FromWorker, transfer?: ArrayBuffer[]) => port.postMessage(m, transfer);

const engine = new Engine(
  (target, name, data) => post({ t: 'event', target, name, data }),
  (forkId, frame) => post({ t: 'fork', forkId, frame }, [frame.buffer as ArrayBuffer]),
  { phases: (workerData as { tickPhases?: number } | undefined)?.tickPhases },
);

port.on('message', async (m: ToWorker) => {
  if (m.t === 'forkAck') return engine.forkAck(m.forkId, m.n);
  if (m.t === 'inject') return engine.inject(m.forkId, m.samples);
  if (m.t === 'link') return engine.addLink(m.linkId, m.port);
  if (m.t !== 'call') return;
  try {
    const fn = (engine as unknown as Record<string, (...a: unknown[]) => unknown>)[m.method];
    if (typeof fn !== 'function' || m.method.startsWith('_')) throw new Error(`unknown operation ${m.method}`);
    const result = await fn.apply(engine, m.args);
    post({ t: 'reply', id: m.id, ok: true, result: result ?? null });
  } catch (e) {
    const err = e as Error & { code?: string };
    post({ t: 'reply', id: m.id, ok: false, error: { message: err.message, code: err.code } });
  }
});

post({ t: 'ready' });
