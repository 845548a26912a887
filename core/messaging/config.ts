/**
 * Which SMS provider this installation uses, from the environment:
 *   SMS_PROVIDER=twilio (or empty: no SMS; POST /messages answers 503)
 *   TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_API_BASE_URL (default https://api.twilio.com)
 */
import type { SmsProvider } from './provider';
import { TwilioProvider } from './twilio';

export class MessagingConfigError extends Error {}

export function providerFromEnv(env: NodeJS.ProcessEnv = process.env): SmsProvider | null {
  const kind = (env.SMS_PROVIDER ?? '').trim().toLowerCase();
  if (!kind) return null;
  if (kind === 'twilio') {
    const accountSid = env.TWILIO_ACCOUNT_SID ?? '';
    const authToken = env.TWILIO_AUTH_TOKEN ?? '';
    if (!accountSid || !authToken) throw new MessagingConfigError('SMS_PROVIDER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN');
    return new TwilioProvider({ accountSid, authToken, baseUrl: env.TWILIO_API_BASE_URL || undefined });
  }
  throw new MessagingConfigError(`SMS_PROVIDER ${JSON.stringify(kind)} is not supported (supported: twilio)`);
}
