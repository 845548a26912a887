import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { conversation_relay } from '../../../core/flow/options/conversation-relay';
import { egressPolicyFor } from '../../../core/net';
import { checkStt } from '../../../core/speech/providers';
import { isVendorTts } from '../../../core/speech/voices';
import { accountSid, callSid, toSid } from '../../../core/twilio/sids';
import { abortError } from '../../kit/clock';
import { Speaker } from '../../voices';
import { engineOnly } from '../../media-server/endpoint';
import type { CallPort } from '../call-port';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

/** What the relay session needs of the action (services.twiml.relay). */
type RelayDeps = Parameters<NonNullable<ActionContext['services']['twiml']>['relay']>[0];

/** Twilio's "HTTP retrieval failure", used here for an app WebSocket that cannot be opened. */
const CONNECT_FAILED = '11200';

/**
 * Our extension (issue 36, TwiML <Connect><ConversationRelay>): answers the call, opens the app's
 * WebSocket (signed, through the egress policy) and runs the session (media-app/twiml/relay.ts)
 * until the app ends it, closes the socket, or the call ends. Sets svc.relay.session_id (VX…),
 * svc.relay.status (ended: the app sent end; completed: the app closed the socket; failed: it could
 * not be opened), svc.relay.duration (whole seconds), svc.relay.handoff_data, and on failure
 * svc.relay.error_code / svc.relay.error_message; then the flow goes on.
 */
export class ConversationRelayTask extends FlowTask<z.infer<typeof conversation_relay>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx);
    const twiml = ctx.services.twiml;
    const speech = ctx.services.speech;
    if (!twiml) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
    if (!speech) return { kind: 'fail', message: 'conversation_relay needs the speech subsystem, which is not available on this server' };
    const o = this.option;
    try {
      checkStt(o.stt_provider ?? '', o.transcription_language ?? o.language ?? 'en-US');
    } catch (e) {
      return { kind: 'fail', message: `conversation_relay: ${(e as Error).message}` };
    }
    const sessionId = toSid('VX', randomUUID());
    for (const k of ['status', 'duration', 'handoff_data', 'error_code', 'error_message']) ctx.vars.set(`svc.relay.${k}`, '');
    ctx.vars.set('svc.relay.session_id', sessionId);
    const authToken = await twiml.authToken(ctx.customerId);
    if (!authToken) return { kind: 'fail', message: 'conversation_relay: the customer is gone' };
    await call.prepareMedia(ctx.signal);
    const started = performance.now();
    const opened = await twiml.openRelay(o.url, authToken);
    if ('failed' in opened) {
      ctx.vars.set('svc.relay.status', 'failed');
      ctx.vars.set('svc.relay.duration', '0');
      ctx.vars.set('svc.relay.error_code', CONNECT_FAILED);
      ctx.vars.set('svc.relay.error_message', opened.failed);
      ctx.note('twiml_error', { code: Number(CONNECT_FAILED), message: `ConversationRelay: ${opened.failed}`, url: o.url });
      return NEXT;
    }
    const ws = opened.ws;
    const info = call.info;
    const { say, close } = this.voices(ctx, call);
    const relay = twiml.relay(
      {
        ws,
        call,
        say,
        listen: (language, provider, phrases) => speech.listen(info.id, { language, provider, phrases, speechTimeoutMs: 0 }),
        setup: {
          sessionId,
          accountSid: accountSid(ctx.customerId),
          callSid: callSid(info.id),
          from: twiml.party(info.source),
          to: twiml.party(info.destination),
          direction: info.direction === 'incoming' ? 'inbound' : 'outbound',
          callerName: info.source.name ?? '',
          callStatus: 'IN-PROGRESS',
          customParameters: o.parameters ?? {},
        },
        logger: twiml.logger,
        signal: ctx.signal,
        onBadMessage: (problem) => ctx.note('twiml_error', { code: 64107, message: `ConversationRelay: ${problem}`, url: o.url }),
        lines: twiml.relayLines(ctx.customerId, info.id),
      },
      o,
    );
    ctx.note('conversation_relay', { session_id: sessionId, event: 'started' });
    const end = await relay.run().finally(close);
    if (ctx.signal.aborted) throw abortError(ctx.signal);
    ctx.vars.set('svc.relay.status', end.status);
    ctx.vars.set('svc.relay.duration', String(Math.round((performance.now() - started) / 1000)));
    ctx.vars.set('svc.relay.handoff_data', end.handoffData);
    ctx.note('conversation_relay', { session_id: sessionId, event: 'ended', status: end.status });
    return NEXT;
  }

  /**
   * How a sentence is spoken: a local voice through the call (talk); a cloud vendor through a Speaker
   * of media-app/voices (the node's configured vendor URL and key, through the egress policy), one per
   * vendor, voice and language, silenced when the sentence is cut. A cloud voice without the ai
   * subsystem or the call's endpoint here rejects (the app gets an `error` message).
   */
  private voices(ctx: ActionContext, call: CallPort): { say: RelayDeps['say']; close: () => Promise<void> } {
    const speakers = new Map<string, Speaker>();
    const close = async () => void (await Promise.all([...speakers.values()].map((s) => s.stop().catch(() => undefined))));
    const say: RelayDeps['say'] = async (text, language, tts, signal) => {
      if (!tts.provider || !isVendorTts(tts.provider)) {
        await call.talk({ text, language, provider: tts.provider, voice_id: tts.voice }, signal);
        return;
      }
      const ai = ctx.services.ai;
      const ep = ai?.endpointOf(call.info.id);
      if (!ai || !ep) throw new Error(`the ${tts.provider} voice needs the ai subsystem and the call's media on this node`);
      const key = `${tts.provider}|${tts.voice ?? ''}|${language}`;
      let speaker = speakers.get(key);
      if (!speaker) {
        speaker = new Speaker(ep, { type: tts.provider, voice: tts.voice ?? '', key: '' }, null, language, 0, {
          egress: ai.deps.egress ?? egressPolicyFor(),
          vendors: ai.voices,
          cacheDir: ai.dataDir,
          onFallback: () => undefined,
          // the fsmrf backend's forks cannot report when injected audio starts; the relay never asks when it did
          reportStarts: !engineOnly(ep, 'reports of when injected audio starts'),
        });
        speakers.set(key, speaker);
      }
      const s = speaker;
      const onAbort = () => void s.stop().catch(() => undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        await s.speak(text, signal);
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    };
    return { say, close };
  }
}
