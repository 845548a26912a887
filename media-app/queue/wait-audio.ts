/**
 * What a caller hears while waiting: the queue's wait flow, its talk, play, beep and sleep actions
 * looped until the signal aborts (an agent answered, a timeout, a kick, the hangup). Other action
 * types are skipped: a wait flow is audio, not logic. No wait flow, or none of those actions:
 * a ringback tone.
 */
import type { Action } from '../../core/flow';
import type { CallPort } from '../flow/call-port';
import { realClock } from '../kit/clock';
import { jsonText } from '../../core/json-text';

const PLAYABLE = new Set(['talk', 'play', 'beep', 'sleep']);
/** Stands for the ringback tone (the flow's play takes http(s) URLs only; the tone is the node's own). */
const RINGBACK: Action = { id: '', next_id: '', type: 'ringback' as Action['type'], option: {} };

/** Plays the ringback tone until the signal aborts. */
export type Ringback = (signal: AbortSignal) => Promise<void>;

async function runOne(call: CallPort, a: Action, signal: AbortSignal, ringback: Ringback): Promise<void> {
  const o = a.option as Record<string, unknown>;
  switch (a.type as string) {
    case 'ringback':
      return ringback(signal);
    case 'talk':
      return call.talk({ text: jsonText(o.text), language: jsonText(o.language || 'en-US'), voice_id: o.voice_id ? jsonText(o.voice_id) : undefined }, signal);
    case 'play':
      return call.play((o.stream_urls as string[] | undefined) ?? [], signal);
    case 'beep':
      return call.beep(signal);
    case 'sleep':
      return realClock.sleep(Number(o.duration) || 0, signal);
  }
}

/** Loops the wait actions until `signal` aborts; never rejects. */
export async function playWaitAudio(call: CallPort, actions: Action[] | undefined, signal: AbortSignal, ringback: Ringback): Promise<void> {
  const list = (actions ?? []).filter((a) => PLAYABLE.has(a.type));
  // a list of nothing but sleeps would be silence: add the tone
  const loop = list.some((a) => a.type !== 'sleep') ? list : [RINGBACK, ...list];
  while (!signal.aborted) {
    for (const a of loop) {
      if (signal.aborted) return;
      const started = Date.now();
      try {
        await runOne(call, a, signal, ringback);
      } catch {
        if (signal.aborted) return;
      }
      // a media failure that returns at once must not spin
      if (Date.now() - started < 20) await realClock.sleep(200, signal).catch(() => undefined);
    }
  }
}
