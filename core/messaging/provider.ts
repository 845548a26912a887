/**
 * The seam between messages and an SMS provider's HTTP API. An adapter sends one SMS per target,
 * maps the provider's status words onto ours, and reads (after verifying the provider's signature)
 * the delivery callbacks and inbound messages the provider posts to us.
 */
import type { TargetStatus } from '../repos/messages';

export interface SmsSendRequest {
  from: string;
  to: string;
  text: string;
  /** Where the provider posts this target's delivery reports. */
  statusCallbackUrl: string;
}

export interface SmsSendResult {
  /** The provider's id of the send (Twilio MessageSid). */
  providerRef: string;
  /** Our status as the provider reported it in the answer (usually queued). */
  status: TargetStatus;
  parts?: number;
}

/** The provider refused the send (HTTP 4xx/5xx with a reason): the target fails. */
export class SmsRejected extends Error {}
/** No answer in time, or no connection: the target goes to gw_timeout. */
export class SmsGatewayTimeout extends Error {}

/** A provider callback as received: the full public URL it was posted to, headers and form fields. */
export interface ProviderRequest {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  params: Record<string, string | string[]>;
}

export interface StatusReport {
  providerRef: string;
  /** null when the provider's word has no meaning for us (e.g. "sending"). */
  status: TargetStatus | null;
  error: string;
}

export interface InboundSms {
  providerRef: string;
  from: string;
  to: string;
  text: string;
  parts: number;
}

export interface SmsProvider {
  /** Path segment of its callback routes and the messages.provider column: twilio, telnyx... */
  readonly name: string;
  send(req: SmsSendRequest): Promise<SmsSendResult>;
  /** True when the request carries a valid signature of this provider account. */
  verify(req: ProviderRequest): boolean;
  parseStatus(params: ProviderRequest['params']): StatusReport | null;
  parseInbound(params: ProviderRequest['params']): InboundSms | null;
  /** What to answer an inbound webhook with (Twilio: empty TwiML). */
  inboundReply(): { contentType: string; body: string };
}
