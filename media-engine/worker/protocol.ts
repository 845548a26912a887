/**
 * Messages between the API thread (MediaServer, Endpoint, Conference) and a media worker: a closed
 * union on both sides. A request names one of the Engine's operations (METHODS) with that
 * operation's parameters, and its reply carries that operation's result; events from the worker are
 * one of the leg or conference events below with their data. Both ends check what arrives with
 * isToWorker / isFromWorker and refuse anything else.
 */
import type { MessagePort } from 'node:worker_threads';
import type { Engine } from './engine';
import type { DtmfEvent } from './leg';
import type { SpeechEvent } from './leg-analysis';
import type { RxTimeoutEvent } from './rx-watch';

/** The Engine operations the API thread may call (anything else is refused by the worker). */
export const METHODS = [
  'createLeg',
  'modifyLeg',
  'offerLeg',
  'destroyLeg',
  'play',
  'stopPlayback',
  'sendDtmf',
  'injectDtmf',
  'record',
  'stopRecord',
  'amd',
  'waitForBeep',
  'stopAmd',
  'vadStart',
  'vadStop',
  'bridge',
  'unbridge',
  'mute',
  'setEcho',
  'echoCancel',
  'watchRx',
  'stats',
  'captureRtp',
  'takeRtpCapture',
  'linkLeg',
  'linkMember',
  'unlink',
  'createConference',
  'joinConference',
  'leaveConference',
  'muteMember',
  'whisperMember',
  'relateMember',
  'recordConference',
  'stopConferenceRecord',
  'conferenceMembers',
  'destroyConference',
  'forkStart',
  'forkStop',
  'forkClear',
  'workerStats',
  'memory',
  'resetStats',
  'shutdown',
] as const satisfies readonly (keyof Engine)[];

export type Method = (typeof METHODS)[number];
/** Each operation's parameters and (resolved) result, from the Engine's own signatures. */
export type Params<M extends Method> = Parameters<Engine[M]>;
export type Result<M extends Method> = Awaited<ReturnType<Engine[M]>>;
/** An operation's parameters after the first (the leg or conference it acts on). */
export type ParamsAfterTarget<M extends Method> = Params<M> extends [unknown, ...infer R] ? R : never;
/** What the worker's dispatcher needs: the operations, as the Engine implements them. */
export type Operations = { [M in Method]: (...args: Params<M>) => ReturnType<Engine[M]> };

/** One request per operation, discriminated by `method`. */
export type CallRequest = { [M in Method]: { t: 'call'; id: number; method: M; args: Params<M> } }[Method];

/**
 * Fork audio goes in batches (frame-batch.ts): `forkAcks` acknowledges `counts[i]` frames of fork
 * `forkIds[i]`; `injects` carries injections in order, injection i being `sizes[i]` samples of
 * `samples` (after those before it) for fork `forkIds[i]` at `rates[i]`.
 */
export type ToWorker =
  | CallRequest
  | { t: 'forkAcks'; forkIds: string[]; counts: number[] }
  | { t: 'injects'; forkIds: string[]; sizes: number[]; rates: (8000 | 16000)[]; samples: Int16Array }
  | { t: 'link'; linkId: string; port: MessagePort };

/** What a leg reports to the API thread (event name → data). */
export interface LegEventData {
  dtmf: DtmfEvent;
  /** the VAD tap (vadStart): the caller started or stopped speaking */
  speech: SpeechEvent;
  /** the receive watch (watchRx): nothing came from the far end for its timeout */
  rxTimeout: RxTimeoutEvent;
  /** a recorder asked with an `armId` (Endpoint.startRecord) is armed: it writes every frame from the next tick on */
  recordArmed: { armId: number; rate: number };
}

/** What a conference reports to the API thread (event name → data). */
export interface ConferenceEventData {
  join: { memberId: string; size: number };
  leave: { memberId: string; size: number };
  /** a member started or stopped talking (dsp/talk.ts: its level, with hysteresis) */
  speaker: { memberId: string; talking: boolean };
  destroy: Record<string, never>;
}

/** One event and its data: { name, data } for each event of a map. */
export type EventOf<T> = { [K in keyof T]: { name: K; data: T[K] } }[keyof T];
export type LegEvent = EventOf<LegEventData>;
export type ConferenceEvent = EventOf<ConferenceEventData>;

export type LegEventMessage = { [K in keyof LegEventData]: { t: 'event'; kind: 'leg'; target: string; name: K; data: LegEventData[K] } }[keyof LegEventData];
export type ConferenceEventMessage = {
  [K in keyof ConferenceEventData]: { t: 'event'; kind: 'conference'; target: string; name: K; data: ConferenceEventData[K] };
}[keyof ConferenceEventData];
export type EventMessage = LegEventMessage | ConferenceEventMessage;

export type ReplyError = { message: string; code?: string };

export type FromWorker =
  | { t: 'ready'; /** the thread's Linux thread id (for its scheduling), when known */ tid?: number }
  | { t: 'reply'; id: number; ok: true; result: unknown }
  | { t: 'reply'; id: number; ok: false; error: ReplyError }
  | EventMessage
  /** the frames the forks were offered in one tick: frame i is `sizes[i]` samples of `samples` (after those before it), for fork `forkIds[i]` */
  | { t: 'forks'; forkIds: string[]; sizes: number[]; samples: Int16Array }
  /** audio fork `forkId`'s injection, queued when none was, went out: its first frame at `at` (Date.now()) */
  | { t: 'forkStarted'; forkId: string; at: number };

const METHOD_SET: ReadonlySet<string> = new Set(METHODS);
const LEG_EVENTS: Record<keyof LegEventData, true> = { dtmf: true, speech: true, rxTimeout: true, recordArmed: true };
const CONFERENCE_EVENTS: Record<keyof ConferenceEventData, true> = { join: true, leave: true, speaker: true, destroy: true };

type Obj = Record<string, unknown>;
const isObj = (m: unknown): m is Obj => typeof m === 'object' && m !== null;
const isStr = (v: unknown): v is string => typeof v === 'string';
const isInt = (v: unknown): v is number => Number.isInteger(v);
const isStrs = (v: unknown): v is string[] => Array.isArray(v) && v.every(isStr);
const isCounts = (v: unknown, n: number): v is number[] => Array.isArray(v) && v.length === n && v.every((x) => isInt(x) && x >= 0);

/** `sizes` (one per id) add up to the samples' length. */
function batchFits(ids: unknown, sizes: unknown, samples: unknown): boolean {
  if (!isStrs(ids) || !isCounts(sizes, ids.length) || !(samples instanceof Int16Array)) return false;
  let total = 0;
  for (const n of sizes) total += n;
  return total === samples.length;
}

export function isMethod(name: unknown): name is Method {
  return isStr(name) && METHOD_SET.has(name);
}

/** A message the worker accepts (the API thread's side of the union), else false. */
export function isToWorker(m: unknown): m is ToWorker {
  if (!isObj(m)) return false;
  switch (m.t) {
    case 'call':
      return isInt(m.id) && isMethod(m.method) && Array.isArray(m.args);
    case 'forkAcks':
      return isStrs(m.forkIds) && isCounts(m.counts, m.forkIds.length);
    case 'injects':
      return batchFits(m.forkIds, m.sizes, m.samples) && Array.isArray(m.rates) && m.rates.length === (m.forkIds as string[]).length && m.rates.every((r) => r === 8000 || r === 16000);
    case 'link':
      return isStr(m.linkId) && isObj(m.port);
    default:
      return false;
  }
}

/** A message the API thread accepts from a worker, else false. */
export function isFromWorker(m: unknown): m is FromWorker {
  if (!isObj(m)) return false;
  switch (m.t) {
    case 'ready':
      return m.tid === undefined || isInt(m.tid);
    case 'reply':
      return isInt(m.id) && (m.ok === true || (m.ok === false && isObj(m.error) && isStr(m.error.message)));
    case 'event':
      if (!isStr(m.target) || !isStr(m.name) || !isObj(m.data)) return false;
      if (m.kind === 'leg') return Object.hasOwn(LEG_EVENTS, m.name);
      if (m.kind === 'conference') return Object.hasOwn(CONFERENCE_EVENTS, m.name);
      return false;
    case 'forks':
      return batchFits(m.forkIds, m.sizes, m.samples);
    case 'forkStarted':
      return isStr(m.forkId) && typeof m.at === 'number' && Number.isFinite(m.at);
    default:
      return false;
  }
}
