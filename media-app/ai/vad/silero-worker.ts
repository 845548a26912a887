/**
 * The Silero VAD thread: one ONNX session (onnxruntime-node, one intra-op thread) for every voice
 * session of this process. Audio arrives per session; whenever sessions have a whole 32 ms window,
 * all of them at the same rate go through the model as ONE batch (input [B, context + window],
 * state [2, B, 128]), so 100 calls cost one inference per window, not 100. The main thread sends
 * what every call wrote in one turn of its event loop as one message (media-app gets every call's
 * frame of a 20 ms tick at once), so the batch holds every call whose window is whole: a message
 * per frame let the model run as soon as the first call's came, one call at a time (docs/ai.md
 * "Turn-taking"). Off the event loop of the call core by construction: nothing here runs on
 * media-app's main thread. A quiet window (RMS under the session's level, once the model has called
 * the line silent) is silence without the model: a call's quiet half costs no inference.
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { CONTEXT, WINDOW, isToSilero, type FromSilero, type SileroRate } from './silero-protocol';

interface Session {
  rate: SileroRate;
  /** samples waiting for a window, as floats in [-1, 1] */
  pending: Float32Array;
  fill: number;
  /** the last CONTEXT samples of the previous window (the v5 model expects them in front) */
  context: Float32Array;
  /** the model's recurrent state of this session: [2][128] */
  state: Float32Array;
  /** a window with an RMS under this (full scale 1) is silence without the model; 0: every window runs */
  quiet: number;
  /** the model's last verdict on this session (0 before its first window) */
  lastProb: number;
}

/**
 * A quiet window is skipped only once the model itself has called the line silent (its last verdict
 * under this): the model's own hangover at the end of a word (a few windows over 0.35 after the sound
 * fell under the quiet level) is kept, so the turn ends where it would with every window run.
 */
const SILENT_PROB = 0.1;

const port = parentPort;
if (!port) throw new Error('silero-worker must run in a worker thread');
const modelPath = (workerData as { modelPath: string }).modelPath;
const sessions = new Map<number, Session>();
let model: ort.InferenceSession | null = null;
let running = false;
let again = false;

const post = (m: FromSilero, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

function open(id: number, rate: SileroRate, quiet: number): void {
  sessions.set(id, { rate, pending: new Float32Array(WINDOW[rate] * 8), fill: 0, context: new Float32Array(CONTEXT[rate]), state: new Float32Array(256), quiet, lastProb: 0 });
}

/** Whether the session's next window is under its quiet level (once the model has called the line silent). */
function isQuiet(s: Session, w: number): boolean {
  if (!s.quiet || s.lastProb >= SILENT_PROB) return false;
  const limit = s.quiet * s.quiet * w;
  let sum = 0;
  for (let i = 0; i < w; i++) {
    sum += s.pending[i]! * s.pending[i]!;
    if (sum >= limit) return false;
  }
  return true;
}

/** Drops the session's next window (its last samples become the next one's context). */
function consume(s: Session, w: number, c: number): void {
  s.context.set(s.pending.subarray(w - c, w));
  s.pending.copyWithin(0, w, s.fill);
  s.fill -= w;
}

function append(s: Session, pcm: Int16Array): void {
  if (s.fill + pcm.length > s.pending.length) {
    const grown = new Float32Array(Math.max(s.pending.length * 2, s.fill + pcm.length));
    grown.set(s.pending.subarray(0, s.fill));
    s.pending = grown;
  }
  for (let i = 0; i < pcm.length; i++) s.pending[s.fill + i] = pcm[i]! / 32768;
  s.fill += pcm.length;
}

/** Runs every whole window of every session, batched by rate; repeats while windows remain. */
async function drain(): Promise<void> {
  if (running || !model) {
    again = true;
    return;
  }
  running = true;
  try {
    do {
      again = false;
      for (const rate of [8000, 16000] as const) {
        const ready = [...sessions.entries()].filter(([, s]) => s.rate === rate && s.fill >= WINDOW[rate]);
        if (ready.length) {
          await runBatch(rate, ready);
          again = true;
        }
      }
    } while (again);
  } catch (e) {
    post({ t: 'failed', message: (e as Error).message });
  } finally {
    running = false;
  }
}

/**
 * The next window of each ready session: the quiet ones are silence at once (probability 0, the
 * model not run), the others go through the model as one batch; one message with every verdict.
 */
async function runBatch(rate: SileroRate, ready: [number, Session][]): Promise<void> {
  const w = WINDOW[rate];
  const c = CONTEXT[rate];
  const ids: number[] = [];
  const kept: number[] = [];
  const loud: [number, Session][] = [];
  for (const [id, s] of ready) {
    if (!isQuiet(s, w)) {
      loud.push([id, s]);
      continue;
    }
    consume(s, w, c);
    ids.push(id);
    kept.push(0);
  }
  const gated = ids.length;
  if (loud.length) {
    const n = w + c;
    const b = loud.length;
    const input = new Float32Array(b * n);
    const state = new Float32Array(2 * b * 128);
    loud.forEach(([, s], i) => {
      input.set(s.context, i * n);
      input.set(s.pending.subarray(0, w), i * n + c);
      state.set(s.state.subarray(0, 128), i * 128);
      state.set(s.state.subarray(128), (b + i) * 128);
    });
    const out = await model!.run({
      input: new ort.Tensor('float32', input, [b, n]),
      state: new ort.Tensor('float32', state, [2, b, 128]),
      sr: new ort.Tensor('int64', BigInt64Array.from([BigInt(rate)]), []),
    });
    const probs = out.output!.data as Float32Array;
    const next = out.stateN!.data as Float32Array;
    loud.forEach(([id, s], i) => {
      // a session closed while the batch ran: nothing to keep
      if (sessions.get(id) !== s) return;
      consume(s, w, c);
      s.lastProb = probs[i]!;
      s.state.set(next.subarray(i * 128, (i + 1) * 128), 0);
      s.state.set(next.subarray((b + i) * 128, (b + i + 1) * 128), 128);
      ids.push(id);
      kept.push(probs[i]!);
    });
  }
  // the verdicts in one message (a message per session cost the main thread an event each)
  const p = Float32Array.from(kept);
  post({ t: 'probs', ids, probs: p, runs: loud.length ? 1 : 0, gated }, [p.buffer]);
}

port.on('message', (m: unknown) => {
  if (!isToSilero(m)) return;
  if (m.t === 'open') open(m.id, m.rate, m.quiet);
  else if (m.t === 'close') sessions.delete(m.id);
  else {
    // every session's audio of the main thread's turn first, then one batch for all that have a window
    let whole = false;
    for (let i = 0, off = 0; i < m.ids.length; off += m.sizes[i]!, i++) {
      const s = sessions.get(m.ids[i]!);
      if (!s) continue;
      append(s, m.pcm.subarray(off, off + m.sizes[i]!));
      whole ||= s.fill >= WINDOW[s.rate];
    }
    if (whole) void drain();
  }
});

ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' }).then(
  (s) => {
    model = s;
    post({ t: 'ready' });
    void drain();
  },
  (e: Error) => post({ t: 'failed', message: `Silero VAD model ${modelPath}: ${e.message}` }),
);
