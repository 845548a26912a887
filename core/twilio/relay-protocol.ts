/**
 * Twilio's ConversationRelay text protocol (JSON text frames over the app's WebSocket), pure.
 * To the app: setup, prompt, dtmf, interrupt, error. From the app: text, play, sendDigits, language,
 * end. An app message that is not one of these, or breaks its shape, is refused with what is wrong
 * (the session answers it with an `error` message, Twilio's 64107, and goes on).
 */

export interface SetupFields {
  sessionId: string;
  accountSid: string;
  callSid: string;
  from: string;
  to: string;
  direction: 'inbound' | 'outbound';
  callerName: string;
  callStatus: string;
  customParameters: Record<string, string>;
}

export type RelayOut =
  | ({ type: 'setup'; parentCallSid: string; forwardedFrom: string; callType: string } & SetupFields)
  | { type: 'prompt'; voicePrompt: string; lang: string; last: boolean }
  | { type: 'dtmf'; digit: string }
  | { type: 'interrupt'; utteranceUntilInterrupt: string; durationUntilInterruptMs: number }
  | { type: 'error'; description: string };

export type RelayIn =
  | { type: 'text'; token: string; last: boolean; interruptible?: boolean; preemptible?: boolean; lang?: string }
  | { type: 'play'; source: string; loop: number; interruptible?: boolean; preemptible?: boolean }
  | { type: 'sendDigits'; digits: string }
  | { type: 'language'; ttsLanguage?: string; transcriptionLanguage?: string }
  | { type: 'end'; handoffData: string };

export type Parsed = { ok: true; msg: RelayIn } | { ok: false; problem: string };

/** The app's longest message, bytes (a larger one is refused unread). */
export const MAX_APP_MESSAGE = 64 * 1024;
const LANG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/;
const DIGITS = /^[0-9*#wW]{1,64}$/;

export function setupMessage(f: SetupFields): RelayOut {
  return { type: 'setup', ...f, parentCallSid: '', forwardedFrom: '', callType: f.to.startsWith('sip:') || f.from.startsWith('sip:') ? 'SIP' : 'PSTN' };
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function optBool(o: Record<string, unknown>, k: string): boolean | undefined | string {
  const v = o[k];
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v;
  return `${k} must be true or false`;
}

/** Parses one text frame of the app. */
export function parseAppMessage(text: string): Parsed {
  if (text.length > MAX_APP_MESSAGE) return { ok: false, problem: `message larger than ${MAX_APP_MESSAGE} bytes` };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'not JSON' };
  }
  if (!isObj(v)) return { ok: false, problem: 'not a JSON object' };
  const bools: Record<string, boolean | undefined> = {};
  for (const k of ['last', 'interruptible', 'preemptible']) {
    const b = optBool(v, k);
    if (typeof b === 'string') return { ok: false, problem: b };
    bools[k] = b;
  }
  switch (v.type) {
    case 'text': {
      if (typeof v.token !== 'string') return { ok: false, problem: 'text: token must be a string' };
      if (v.lang !== undefined && (typeof v.lang !== 'string' || !LANG.test(v.lang))) return { ok: false, problem: 'text: lang must be a language tag' };
      return { ok: true, msg: { type: 'text', token: v.token, last: bools.last ?? false, interruptible: bools.interruptible, preemptible: bools.preemptible, lang: v.lang as string | undefined } };
    }
    case 'play': {
      if (typeof v.source !== 'string' || !/^https?:\/\/[^\s/]+/i.test(v.source)) return { ok: false, problem: 'play: source must be an http or https URL' };
      const loop = v.loop === undefined ? 1 : v.loop;
      if (typeof loop !== 'number' || !Number.isInteger(loop) || loop < 0 || loop > 1000) return { ok: false, problem: 'play: loop must be an integer from 0 to 1000' };
      return { ok: true, msg: { type: 'play', source: v.source, loop, interruptible: bools.interruptible, preemptible: bools.preemptible } };
    }
    case 'sendDigits':
      if (typeof v.digits !== 'string' || !DIGITS.test(v.digits)) return { ok: false, problem: 'sendDigits: digits must be 1-64 of 0-9, *, #, w' };
      return { ok: true, msg: { type: 'sendDigits', digits: v.digits } };
    case 'language': {
      const out: RelayIn = { type: 'language' };
      for (const k of ['ttsLanguage', 'transcriptionLanguage'] as const) {
        const l = v[k];
        if (l === undefined) continue;
        if (typeof l !== 'string' || !LANG.test(l)) return { ok: false, problem: `language: ${k} must be a language tag` };
        out[k] = l;
      }
      if (!out.ttsLanguage && !out.transcriptionLanguage) return { ok: false, problem: 'language: needs ttsLanguage or transcriptionLanguage' };
      return { ok: true, msg: out };
    }
    case 'end': {
      const h = v.handoffData;
      if (h !== undefined && typeof h !== 'string') return { ok: false, problem: 'end: handoffData must be a string' };
      return { ok: true, msg: { type: 'end', handoffData: h ?? '' } };
    }
    default:
      return { ok: false, problem: `unknown message type ${JSON.stringify(String(v.type)).slice(0, 40)}` };
  }
}
