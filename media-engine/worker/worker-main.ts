/**
 * Entry point of a media worker thread: runs an Engine and answers the API thread's messages. Only
 * the messages of protocol.ts are taken: an unknown message or operation is refused (a call with an
 * EPROTO reply, anything else with a warning), never looked up on the Engine by name.
 */
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { configureSources, prewarmSpeech } from './source-resolver';
import { configureRtpIo, type RtpIoKind } from './rtp-transport';
import { Engine } from './engine';
import { FrameBatch } from './frame-batch';
import { isToWorker, type CallRequest, type FromWorker, type Method, type Operations, type Params } from './protocol';

if (!parentPort) throw new Error('media-engine worker must run in a worker thread');
const port = parentPort;
configureSources((workerData ?? {}) as Parameters<typeof configureSources>[0]);
// without espeak-ng (or its voice) nothing is warmed: each say then fails with its own clear error
prewarmSpeech().catch(() => undefined);
{
  const wd = workerData as { rtpIo?: RtpIoKind; ringEntries?: number; cLegs?: boolean } | undefined;
  configureRtpIo(wd?.rtpIo ?? 'dgram', { ringEntries: wd?.ringEntries, cLegs: wd?.cLegs });
}
// the frames the forks are offered in a tick go up in one message after it (frame-batch.ts); any
// other message first sends the frames before it, so that the order holds
const forkFrames = new FrameBatch();
let framesDue = false;
function flushFrames(): void {
  framesDue = false;
  const b = forkFrames.take();
  if (b) port.postMessage({ t: 'forks', forkIds: b.ids, sizes: b.sizes, samples: b.samples } satisfies FromWorker, [b.samples.buffer as ArrayBuffer]);
}
function offerFrame(forkId: string, frame: Int16Array): void {
  forkFrames.add(forkId, frame);
  if (!framesDue) {
    framesDue = true;
    queueMicrotask(flushFrames);
  }
}
const post = (m: FromWorker, transfer?: ArrayBuffer[]) => {
  if (framesDue) flushFrames();
  port.postMessage(m, transfer);
};

// Linux keeps the nice value per thread: pid 0 is this worker thread only (MediaServerOptions.workerNice)
const nice = (workerData as { nice?: number } | undefined)?.nice;
if (typeof nice === 'number' && Number.isInteger(nice)) {
  try {
    os.setPriority(0, Math.max(-20, Math.min(19, nice)));
  } catch (e) {
    process.emitWarning(`media worker: cannot set nice ${nice} (${(e as Error).message}); running at the default priority`);
  }
}

const engine = new Engine((e) => post(e), offerFrame, {
  phases: (workerData as { tickPhases?: number } | undefined)?.tickPhases,
  forkStarted: (forkId, at) => post({ t: 'forkStarted', forkId, at }),
});
const ops: Operations = engine;

function run<M extends Method>(method: M, args: Params<M>) {
  return ops[method](...args);
}

async function answer(m: CallRequest): Promise<void> {
  try {
    const result = await run(m.method, m.args);
    post({ t: 'reply', id: m.id, ok: true, result: result ?? null });
  } catch (e) {
    const err = e as Error & { code?: string };
    post({ t: 'reply', id: m.id, ok: false, error: { message: err.message, code: err.code } });
  }
}

/** The refusal of a message outside the protocol: a call is answered (its caller must not wait forever). */
function refuse(m: unknown): void {
  const o: { t?: unknown; id?: unknown; method?: unknown } = typeof m === 'object' && m !== null ? m : {};
  if (o.t === 'call' && typeof o.id === 'number' && Number.isInteger(o.id)) {
    post({ t: 'reply', id: o.id, ok: false, error: { message: `unknown operation ${String(o.method)}`, code: 'EPROTO' } });
  } else process.emitWarning(`media worker: refused a message outside the protocol (t=${String(o.t)})`);
}

port.on('message', (m: unknown) => {
  if (!isToWorker(m)) return refuse(m);
  switch (m.t) {
    case 'forkAcks':
      for (let i = 0; i < m.forkIds.length; i++) engine.forkAck(m.forkIds[i]!, m.counts[i]!);
      return;
    case 'injects': {
      let off = 0;
      for (let i = 0; i < m.forkIds.length; i++) {
        const n = m.sizes[i]!;
        engine.inject(m.forkIds[i]!, m.samples.subarray(off, off + n), m.rates[i]);
        off += n;
      }
      return;
    }
    case 'link':
      return engine.addLink(m.linkId, m.port);
    case 'call':
      return void answer(m);
  }
});

/** This thread's Linux thread id (/proc/thread-self is "<pid>/task/<tid>"): the API thread sets its scheduling by it. */
function threadId(): number | undefined {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) ? tid : undefined;
  } catch {
    return undefined;
  }
}

post({ t: 'ready', tid: threadId() });
