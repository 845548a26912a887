/**
 * Status callbacks (docs/twilio.md "Status callbacks"): a consumer group (`twilio-callbacks`, one
 * control-api copy handles each event) reads the platform's call events and, for a call whose row
 * holds `data.twilio` (set by Calls create/update), or an inbound call to a number with a
 * StatusCallback (IncomingPhoneNumbers; `completed` only), sends Twilio's call-progress parameters to its StatusCallback:
 *   call_created → initiated, call_ringing → ringing, call_progressing → answered, call_hangup → completed
 * (only the events it asked for; `completed` by default). POST form-encoded or GET with the query,
 * signed with X-Twilio-Signature (the account's AuthToken), through the egress policy. The callbacks
 * of one call go out one after another in event order (SequenceNumber counts them); a 5xx or a
 * transport failure is retried (3 attempts, 1 s then 2 s apart), a 4xx or a refused target is not.
 * They are not rows of webhook_deliveries: that log holds JSON bodies signed with the platform's scheme.
 */
import type { AppContext } from '../context';
import { EventSubscriber, eventStreamKey, type PlatformEvent } from '../../core/events/bus';
import { EgressRefused, type EgressPolicy } from '../../core/net';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { isUuid } from '../../core/ids';
import { signedWebhook } from '../../core/twilio/signature';
import { accountSid, callSid } from '../../core/twilio/sids';
import { currentAuthToken } from './auth';
import { API_VERSION, durationOf, twilioAddress, twilioDataOf, twilioDirection, twilioStatus, type TwilioCallData } from './call-json';
import { numbersRepo } from '../../core/repos/numbers';
import { numberTwilio } from './numbers';
import { rfc2822 } from './params';

const EVENT_OF: Record<string, string> = { call_created: 'initiated', call_ringing: 'ringing', call_progressing: 'answered', call_hangup: 'completed' };

export interface CallbackOptions {
  stream?: string;
  group?: string;
  egress?: EgressPolicy;
  timeoutMs?: number;
  /** First retry delay, doubled per attempt (default 1000 ms). */
  baseDelayMs?: number;
}

export interface CallbackService {
  handle(e: PlatformEvent): Promise<void>;
  /** Resolves when every callback queued so far has been sent or given up (tests). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** Twilio's call-progress parameters for one event of a call. */
export function callbackParams(c: CallRow, event: string, sequence: number, now: Date): Record<string, string> {
  const status = event === 'initiated' ? 'initiated' : event === 'ringing' ? 'ringing' : event === 'answered' ? 'in-progress' : twilioStatus(c);
  const p: Record<string, string> = {
    AccountSid: accountSid(c.customer_id),
    ApiVersion: API_VERSION,
    CallSid: callSid(c.id),
    CallStatus: status,
    CallbackSource: 'call-progress-events',
    Called: twilioAddress(c.destination),
    Caller: twilioAddress(c.source),
    Direction: twilioDirection(c),
    From: twilioAddress(c.source),
    SequenceNumber: String(sequence),
    Timestamp: rfc2822(now) ?? '',
    To: twilioAddress(c.destination),
  };
  if (event === 'completed') p.CallDuration = durationOf(c) ?? '0';
  return p;
}

/**
 * Where a call's callbacks go: its own settings (Calls create/update), else, for an inbound call to a
 * number of its customer with a StatusCallback, that number's (completed only, as Twilio's numbers).
 */
async function callbackTarget(ctx: AppContext, c: CallRow): Promise<TwilioCallData | null> {
  const own = twilioDataOf(c);
  if (own || c.direction !== 'incoming' || c.destination.type !== 'tel') return own;
  const n = await numbersRepo(ctx.db).getByNumber(c.destination.target);
  if (!n || n.customer_id !== c.customer_id) return null;
  const t = numberTwilio(n);
  return t.status_callback ? { status_callback: t.status_callback, status_callback_method: t.status_callback_method, status_callback_events: ['completed'] } : null;
}

export async function startTwilioCallbacks(ctx: AppContext, opts: CallbackOptions = {}): Promise<CallbackService> {
  const egress = opts.egress ?? ctx.egress;
  const baseDelay = opts.baseDelayMs ?? 1000;
  /** Per call: the tail of its callback chain, and how many callbacks it has had. */
  const chains = new Map<string, { tail: Promise<void>; sent: number }>();

  const sender = { ctx, egress, timeoutMs: opts.timeoutMs ?? 5000 };

  async function deliver(callId: string, event: string, seq: number): Promise<void> {
    const c = await callsRepo(ctx.db).get(callId);
    const cb = c ? await callbackTarget(ctx, c) : null;
    if (!c || !cb) return;
    const token = await currentAuthToken(ctx, c.customer_id);
    if (!token) return;
    const params = callbackParams(c, event, seq, new Date());
    for (let attempt = 1; attempt <= 3; attempt++) {
      if ((await send(sender, cb.status_callback, cb.status_callback_method, params, token)) === 'done') return;
      if (attempt < 3) await new Promise((r) => setTimeout(r, baseDelay * 2 ** (attempt - 1)));
    }
    ctx.logger.warn({ call_sid: params.CallSid, event }, 'twilio status callback failed after 3 attempts');
  }

  async function handle(e: PlatformEvent): Promise<void> {
    const event = EVENT_OF[e.event_type];
    const callId = e.resource_id;
    if (!event || !isUuid(callId)) return;
    const c = await callsRepo(ctx.db).get(callId);
    const cb = c ? await callbackTarget(ctx, c) : null;
    if (!cb || !cb.status_callback_events.includes(event)) return;
    const chain = chains.get(callId) ?? { tail: Promise.resolve(), sent: 0 };
    const seq = chain.sent++;
    chain.tail = chain.tail.then(() => deliver(callId, event, seq)).catch((err: unknown) => ctx.logger.warn({ err: String(err) }, 'twilio status callback error'));
    chains.set(callId, chain);
    if (event === 'completed') {
      const done = chain.tail;
      void done.then(() => {
        if (chains.get(callId)?.tail === done) chains.delete(callId);
      });
    }
  }

  const reader = ctx.redis.duplicate();
  const sub = new EventSubscriber(reader, {
    stream: opts.stream ?? eventStreamKey(ctx.config.redisKeyPrefix),
    group: opts.group ?? 'twilio-callbacks',
    consumer: `control-api-${process.pid}`,
    blockMs: 500,
    handler: async (batch) => {
      for (const e of batch) await handle(e);
    },
  });
  sub.on('error', (err: unknown) => ctx.logger.warn({ err: String(err) }, 'twilio callback reader error'));
  await sub.start();

  return {
    handle,
    idle: async () => {
      await Promise.all([...chains.values()].map((c) => c.tail));
    },
    async close() {
      await sub.stop();
      await Promise.all([...chains.values()].map((c) => c.tail));
      reader.disconnect();
    },
  };
}

/** One signed callback request; 'retry' on a 5xx or a transport error (a refusal by the egress policy is final). */
async function send(
  { ctx, egress, timeoutMs }: { ctx: AppContext; egress: EgressPolicy; timeoutMs: number },
  url: string,
  method: 'GET' | 'POST',
  params: Record<string, string>,
  token: string,
): Promise<'done' | 'retry'> {
  const { url: target, body, signature } = signedWebhook(token, method, url, params);
  try {
    const res = await egress.open(target, {
      method,
      timeoutMs,
      headers: { 'X-Twilio-Signature': signature, 'User-Agent': 'TwilioProxy/1.1', ...(method === 'POST' ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}) },
      ...(body !== undefined ? { body } : {}),
    });
    res.close();
    return res.status >= 500 ? 'retry' : 'done';
  } catch (e) {
    if (e instanceof EgressRefused) {
      ctx.logger.warn({ call_sid: params.CallSid, reason: e.message }, 'twilio status callback refused by the egress policy');
      return 'done';
    }
    return 'retry';
  }
}
