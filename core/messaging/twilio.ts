/**
 * Twilio Programmable Messaging: POST {base}/2010-04-01/Accounts/{AccountSid}/Messages.json
 * (form-encoded To, From, Body, StatusCallback; HTTP basic auth AccountSid:AuthToken), answered
 * 201 with the Message resource (sid, status, num_segments). Status callbacks and inbound messages
 * are form posts signed with X-Twilio-Signature: base64(HMAC-SHA1(AuthToken, URL + each POST
 * parameter name and value, names sorted)).
 */
import crypto from 'node:crypto';
import type { TargetStatus } from '../repos/messages';
import { SmsGatewayTimeout, SmsRejected, type InboundSms, type ProviderRequest, type SmsProvider, type SmsSendRequest, type SmsSendResult, type StatusReport } from './provider';
import { jsonText } from '../json-text';

export interface TwilioOptions {
  accountSid: string;
  authToken: string;
  /** https://api.twilio.com in production; a local server in tests. */
  baseUrl?: string;
  timeoutMs?: number;
}

/** Twilio MessageStatus → our target status (sending/accepted/scheduled say nothing new). */
const STATUS: Record<string, TargetStatus | null> = {
  accepted: 'queued',
  scheduled: 'queued',
  queued: 'queued',
  sending: null,
  sent: 'sent',
  delivered: 'delivered',
  undelivered: 'failed',
  failed: 'failed',
  canceled: 'failed',
  received: 'received',
};

export function twilioSignature(authToken: string, url: string, params: Record<string, string | string[]>): string {
  let data = url;
  for (const key of Object.keys(params).sort()) {
    const v = params[key]!;
    for (const value of Array.isArray(v) ? [...v].sort() : [v]) data += key + value;
  }
  return crypto.createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

function one(v: string | string[] | undefined): string {
  return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
}

export class TwilioProvider implements SmsProvider {
  readonly name = 'twilio';
  private readonly base: string;

  constructor(private readonly opts: TwilioOptions) {
    this.base = (opts.baseUrl ?? 'https://api.twilio.com').replace(/\/+$/, '');
  }

  async send(req: SmsSendRequest): Promise<SmsSendResult> {
    const url = `${this.base}/2010-04-01/Accounts/${encodeURIComponent(this.opts.accountSid)}/Messages.json`;
    const form = new URLSearchParams({ To: req.to, From: req.from, Body: req.text, StatusCallback: req.statusCallbackUrl });
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: 'Basic ' + Buffer.from(`${this.opts.accountSid}:${this.opts.authToken}`).toString('base64'),
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
      });
    } catch (e) {
      throw new SmsGatewayTimeout(`twilio unreachable: ${(e as Error).message}`);
    }
    const text = await res.text().catch(() => '');
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      /* non-JSON error page */
    }
    if (res.status >= 500) throw new SmsGatewayTimeout(`twilio answered ${res.status}`);
    if (res.status !== 201 && res.status !== 200) {
      throw new SmsRejected(`twilio ${res.status}${body.code ? ` code ${jsonText(body.code)}` : ''}: ${jsonText(body.message, text).slice(0, 300)}`);
    }
    const sid = typeof body.sid === 'string' ? body.sid : '';
    if (!sid) throw new SmsRejected('twilio answer has no sid');
    const status = STATUS[jsonText(body.status, 'queued')] ?? 'queued';
    const parts = Number(body.num_segments);
    return { providerRef: sid, status: status === 'received' ? 'queued' : status, parts: Number.isInteger(parts) && parts > 0 ? parts : undefined };
  }

  verify(req: ProviderRequest): boolean {
    const got = one(req.headers['x-twilio-signature']);
    if (!got) return false;
    const want = twilioSignature(this.opts.authToken, req.url, req.params);
    const a = Buffer.from(got);
    const b = Buffer.from(want);
    return a.length === b.length && crypto.timingSafeEqual(a, b);
  }

  parseStatus(params: ProviderRequest['params']): StatusReport | null {
    const sid = one(params.MessageSid) || one(params.SmsSid);
    const word = one(params.MessageStatus) || one(params.SmsStatus);
    if (!sid || !word) return null;
    if (one(params.AccountSid) && one(params.AccountSid) !== this.opts.accountSid) return null;
    const status = STATUS[word] ?? null;
    const code = one(params.ErrorCode);
    return { providerRef: sid, status: status === 'received' ? null : status, error: code ? `twilio error ${code}` : '' };
  }

  parseInbound(params: ProviderRequest['params']): InboundSms | null {
    const sid = one(params.MessageSid) || one(params.SmsSid);
    const from = one(params.From);
    const to = one(params.To);
    if (!sid || !from || !to) return null;
    if (one(params.AccountSid) && one(params.AccountSid) !== this.opts.accountSid) return null;
    const parts = Number(one(params.NumSegments));
    return { providerRef: sid, from, to, text: one(params.Body), parts: Number.isInteger(parts) && parts > 0 ? parts : 1 };
  }

  inboundReply() {
    return { contentType: 'text/xml', body: '<?xml version="1.0" encoding="UTF-8"?><Response></Response>' };
  }
}
