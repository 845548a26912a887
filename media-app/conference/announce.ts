/**
 * Twilio's AnnounceUrl (REST Conferences update: to the whole room; Participants update: to one
 * participant), run by the room's node. A URL ending in .wav or .mp3 is audio, played as is; any
 * other is a TwiML document of <Play> and <Say> only (core/twiml/wait.ts, kind `announcement`),
 * fetched signed (X-Twilio-Signature, the customer's AuthToken) through the egress policy with
 * AccountSid, ConferenceSid, FriendlyName (and CallSid for a participant). Its steps play, in order,
 * on every target at once (the mix's AnnounceTarget: on the engine the member's endpoint, heard in place
 * of the room while it plays; on the switch a file its room plays to the member; a member on another node hears it over
 * its bridge leg). Play URLs are fetched by the media
 * engine through the same egress policy. The result is the announcement-end callback, or
 * announcement-fail with the reason (the fetch, the document, a play or a voice that failed).
 */
import { TwimlError } from '../../core/twiml/compile';
import { MAX_TWIML_BYTES } from '../../core/twiml/parse';
import { compileWaitDocument, isAudioUrl, type WaitStep } from '../../core/twiml/wait';
import type { AnnounceTarget } from '../media-server/conference';
import type { FlowHttp } from '../kit/http';
import { fetchTwiml } from '../twiml/fetch';

export interface Announcement {
  url: string;
  method: 'GET' | 'POST';
  /** The request parameters (AccountSid, ConferenceSid, FriendlyName, CallSid). */
  params: Record<string, string>;
  authToken: string;
}

export interface AnnounceDeps {
  http: FlowHttp;
  timeoutMs: number;
}

/** Where to play, read at each step (one that left is skipped): each member's AnnounceTarget (its endpoint, or its room on the switch). */
export type Targets = () => AnnounceTarget[];

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** One step on one endpoint, `times` over. */
async function playOn(ep: AnnounceTarget, step: WaitStep & { kind: 'media' }): Promise<void> {
  const o = step.action.option as Record<string, unknown>;
  for (let i = 0; i < step.times && !ep.destroyed; i++) {
    if (step.action.type === 'play') await ep.play(Array.isArray(o.stream_urls) ? o.stream_urls.map(text) : []);
    else if (step.action.type === 'talk') await ep.say(text(o.text), { language: text(o.language) || undefined, voice: text(o.voice_id) || undefined, provider: text(o.provider) || undefined });
  }
}

/** Plays the announcement; resolves with the failure's reason, or null once it has played. Never rejects. */
export async function announce(d: AnnounceDeps, a: Announcement, targets: Targets): Promise<string | null> {
  try {
    let steps: WaitStep[];
    if (isAudioUrl(a.url)) steps = [{ kind: 'media', action: { id: '', next_id: '', type: 'play', option: { stream_urls: [a.url] } }, times: 1 }];
    else {
      const signal = AbortSignal.timeout(d.timeoutMs);
      const fetched = await fetchTwiml(d.http, { url: a.url, method: a.method, params: a.params, authToken: a.authToken, timeoutMs: d.timeoutMs, maxBytes: MAX_TWIML_BYTES + 1, signal });
      steps = compileWaitDocument(fetched.text, 'announcement', { documentUrl: fetched.url, method: a.method });
    }
    for (const step of steps) {
      if (step.kind !== 'media') continue;
      const eps = targets();
      if (eps.length === 0) return 'nobody to announce to';
      await Promise.all(eps.map((ep) => playOn(ep, step)));
    }
    return null;
  } catch (err) {
    if (err instanceof TwimlError) return `${err.code}: ${err.message}`;
    return (err as Error).message || 'the announcement could not be played';
  }
}
