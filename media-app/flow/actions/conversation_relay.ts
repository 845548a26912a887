import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { conversation_relay } from '../../../core/flow/options/conversation-relay';
import { checkStt } from '../../../core/speech/providers';
import { accountSid, callSid, toSid } from '../../../core/twilio/sids';
import { abortError } from '../clock';
import { twilioParty } from '../../twiml/params';
import { RelayConversation } from '../../twiml/relay';
import { RelayConnectError } from '../../twiml/relay-socket';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

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
    let ws;
    try {
      ws = await twiml.openRelay(o.url, authToken);
    } catch (e) {
      if (!(e instanceof RelayConnectError)) throw e;
      ctx.vars.set('svc.relay.status', 'failed');
      ctx.vars.set('svc.relay.duration', '0');
      ctx.vars.set('svc.relay.error_code', CONNECT_FAILED);
      ctx.vars.set('svc.relay.error_message', e.message);
      ctx.note('twiml_error', { code: Number(CONNECT_FAILED), message: `ConversationRelay: ${e.message}`, url: o.url });
      return NEXT;
    }
    const info = call.info;
    const relay = new RelayConversation(
      {
        ws,
        call,
        listen: (language, provider, phrases) => speech.listen(info.id, { language, provider, phrases, speechTimeoutMs: 0 }),
        setup: {
          sessionId,
          accountSid: accountSid(ctx.customerId),
          callSid: callSid(info.id),
          from: twilioParty(info.source),
          to: twilioParty(info.destination),
          direction: info.direction === 'incoming' ? 'inbound' : 'outbound',
          callerName: info.source.name ?? '',
          callStatus: 'IN-PROGRESS',
          customParameters: o.parameters ?? {},
        },
        logger: twiml.logger,
        signal: ctx.signal,
        onBadMessage: (problem) => ctx.note('twiml_error', { code: 64107, message: `ConversationRelay: ${problem}`, url: o.url }),
      },
      o,
    );
    ctx.note('conversation_relay', { session_id: sessionId, event: 'started' });
    const end = await relay.run();
    if (ctx.signal.aborted) throw abortError(ctx.signal);
    ctx.vars.set('svc.relay.status', end.status);
    ctx.vars.set('svc.relay.duration', String(Math.round((performance.now() - started) / 1000)));
    ctx.vars.set('svc.relay.handoff_data', end.handoffData);
    ctx.note('conversation_relay', { session_id: sessionId, event: 'ended', status: end.status });
    return NEXT;
  }
}
