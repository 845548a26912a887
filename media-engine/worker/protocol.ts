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

export type ToWorker =
  CallRequest | { t: 'forkAck'; forkId: string; n: number } | { t: 'inject'; forkId: string; samples: Int16Array; rate?: 8000 | 16000 } | { t: 'link'; linkId: string; port: MessagePort };

/** What a leg reports to the API thread (event name → data). */
export interface LegEventData {
  dtmf: DtmfEvent;
  /** the VAD tap (vadStart): the caller started or stopped speaking */
  speech: SpeechEvent;
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
  | { t: 'fork'; forkId: string; frame: Int16Array };

const METHOD_SET: ReadonlySet<string> = new Set(METHODS);
const LEG_EVENTS: Record<keyof LegEventData, true> = { dtmf: true, speech: true };
const CONFERENCE_EVENTS: Record<keyof ConferenceEventData, true> = { join: true, leave: true, speaker: true, destroy: true };

type Obj = Record<string, unknown>;
const isObj = (m: unknown): m is Obj => typeof m === 'object' && m !== null;
const isStr = (v: unknown): v is string => typeof v === 'string';
const isInt = (v: unknown): v is number => Number.isInteger(v);

export function isMethod(name: unknown): name is Method {
  return isStr(name) && METHOD_SET.has(name);
}

/** A message the worker accepts (the API thread's side of the union), else false. */
export function isToWorker(m: unknown): m is ToWorker {
  if (!isObj(m)) return false;
  switch (m.t) {
    case 'call':
      return isInt(m.id) && isMethod(m.method) && Array.isArray(m.args);
    case 'forkAck':
      return isStr(m.forkId) && isInt(m.n);
    case 'inject':
      return isStr(m.forkId) && m.samples instanceof Int16Array && (m.rate === undefined || m.rate === 8000 || m.rate === 16000);
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
    case 'fork':
      return isStr(m.forkId) && m.frame instanceof Int16Array;
    default:
      return false;
  }
}
