/**
 * <Gather partialResultCallback>: while a speech Gather listens, each segment the recogniser gives is
 * sent to the callback as it comes, in order (one request at a time, so SequenceNumber arrives in
 * order), signed with X-Twilio-Signature and through the flow's HTTP client (the egress policy).
 * Parameters: AccountSid, CallSid, LanguageCode, SequenceNumber (1, 2, …), UnstableSpeechResult (the
 * interim guess; empty after a finished segment), StableSpeechResult (the finished segments so far),
 * Stability (the guess's confidence from the recogniser; left out when it gives none). Answers are
 * not read (no TwiML); a failure is not retried: the first one is reported to `onError` (11200) and
 * the later ones are dropped silently, and the Gather goes on.
 */
import { signedWebhook } from '../../core/twilio/signature';
import { accountSid, callSid } from '../../core/twilio/sids';
import { FlowHttpError, type FlowHttp } from '../kit/http';

export interface PartialTarget {
  http: FlowHttp;
  authToken: string;
  url: string;
  method: 'GET' | 'POST';
  customerId: string;
  callId: string;
  language: string;
  timeoutMs: number;
  /** The first delivery that failed (HTTP status or transport), with Twilio's code. */
  onError: (code: 11200, message: string) => void;
}

export interface Segment {
  text: string;
  final: boolean;
  confidence?: number;
}

export class PartialResults {
  private seq = 0;
  private stable: string[] = [];
  private chain: Promise<void> = Promise.resolve();
  private failed = false;

  constructor(private readonly t: PartialTarget) {}

  /** Queues one callback for this segment. */
  push(seg: Segment): void {
    const text = seg.text.trim();
    if (!text) return;
    if (seg.final) this.stable.push(text);
    const params: Record<string, string> = {
      AccountSid: accountSid(this.t.customerId),
      CallSid: callSid(this.t.callId),
      LanguageCode: this.t.language,
      SequenceNumber: String(++this.seq),
      UnstableSpeechResult: seg.final ? '' : text,
      StableSpeechResult: this.stable.join(' '),
    };
    if (!seg.final && seg.confidence !== undefined) params.Stability = String(Math.round(Math.min(1, Math.max(0, seg.confidence)) * 10000) / 10000);
    this.chain = this.chain.then(() => this.send(params));
  }

  /** Resolves when every queued callback has been tried. */
  drained(): Promise<void> {
    return this.chain;
  }

  private async send(params: Record<string, string>): Promise<void> {
    const { method, authToken } = this.t;
    const { url, body, signature } = signedWebhook(authToken, method, this.t.url, params);
    const headers: Record<string, string> = { 'user-agent': 'openvoice-twiml/1.0', 'x-twilio-signature': signature };
    if (method === 'POST') headers['content-type'] = 'application/x-www-form-urlencoded';
    let why = '';
    try {
      const res = await this.t.http.request({
        method,
        url,
        headers,
        body,
        timeoutMs: this.t.timeoutMs,
        maxBytes: 64 * 1024,
        signal: AbortSignal.timeout(this.t.timeoutMs + 1000),
      });
      if (res.status < 200 || res.status >= 300) why = `the partialResultCallback answered HTTP ${res.status}`;
    } catch (e) {
      why = `the partialResultCallback could not be reached: ${e instanceof FlowHttpError ? e.message : (e as Error).message}`;
    }
    if (!why || this.failed) return;
    this.failed = true;
    this.t.onError(11200, why);
  }
}
