/**
 * A Twilio stream's status callback (`<Stream statusCallback>`): stream-started, stream-stopped and
 * stream-error with Twilio's parameters, signed with X-Twilio-Signature under the customer's derived
 * AuthToken, sent through the egress policy. GET puts the parameters in the query string (signed over
 * the URL alone); POST sends them form-encoded. One attempt, 5 s; a failure is logged, never retried
 * and never fatal to the stream or the call.
 */
import type { Logger } from 'pino';
import { EgressFailed, EgressRefused } from '../../core/net';
import { customersRepo } from '../../core/repos/customers';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { signedWebhook } from '../../core/twilio/signature';
import type { CallDeps } from '../call/deps';

export type StreamEvent = 'stream-started' | 'stream-stopped' | 'stream-error';

export interface StatusCallbackTarget {
  url: string;
  method: 'GET' | 'POST';
}

export interface StreamCallbackIds {
  customerId: string;
  accountSid: string;
  callSid: string;
  streamSid: string;
  streamName: string;
}

/**
 * The customer's current AuthToken (the key of X-Twilio-Signature on the stream's handshake and its
 * callbacks), or null for a customer that is gone. includeDeleted reads the whole row (the live-row
 * query leaves twilio_token_generation out): a customer deleted during the call still signs.
 */
export async function streamAuthToken(deps: Pick<CallDeps, 'db' | 'config'>, customerId: string): Promise<string | null> {
  const row = await customersRepo(deps.db).get(customerId, { includeDeleted: true });
  return row ? twilioAuthToken(deps.config.jwtSecret, customerId, row.twilio_token_generation) : null;
}

export class StreamStatusCallback {
  constructor(
    private readonly deps: Pick<CallDeps, 'db' | 'egress' | 'config'>,
    private readonly logger: Logger,
    private readonly target: StatusCallbackTarget,
    private readonly ids: StreamCallbackIds,
  ) {}

  async send(event: StreamEvent, error?: string): Promise<void> {
    const params: Record<string, string> = {
      AccountSid: this.ids.accountSid,
      CallSid: this.ids.callSid,
      StreamSid: this.ids.streamSid,
      StreamName: this.ids.streamName,
      StreamEvent: event,
      Timestamp: new Date().toISOString(),
    };
    if (error) params.StreamError = error;
    try {
      const token = await streamAuthToken(this.deps, this.ids.customerId);
      if (token === null) {
        this.logger.info({ stream: this.ids.streamSid, event }, 'stream status callback not sent: customer not found');
        return;
      }
      const { url, body, signature } = signedWebhook(token, this.target.method, this.target.url, params);
      const headers: Record<string, string> = { 'X-Twilio-Signature': signature, 'User-Agent': 'TwilioProxy/1.1' };
      if (this.target.method === 'POST') headers['Content-Type'] = 'application/x-www-form-urlencoded';
      const res = await this.deps.egress.fetch(url, { method: this.target.method, headers, body, timeoutMs: 5000, maxBytes: 64 * 1024 });
      if (res.status >= 400) this.logger.info({ stream: this.ids.streamSid, event, status: res.status }, 'stream status callback answered with an error');
    } catch (e) {
      if (!(e instanceof EgressRefused || e instanceof EgressFailed)) throw e;
      this.logger.info({ stream: this.ids.streamSid, event, err: e.message }, 'stream status callback not delivered');
    }
  }
}
