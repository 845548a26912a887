import { createHmac } from 'node:crypto';

/**
 * A customer's Twilio-compatible AuthToken: 32 hex digits derived, never stored, from the platform's
 * signing secret (config.jwtSecret), the customer id and the customer's `twilio_token_generation`
 * (migration 0935; raising it rotates the token and voids the old one). It is both the password of
 * HTTP basic auth with the AccountSid and the key of `X-Twilio-Signature` on webhooks and callbacks,
 * as on Twilio. Changing JWT_SECRET rotates every customer's token.
 */
export function twilioAuthToken(platformSecret: string, customerId: string, generation: number): string {
  return createHmac('sha256', platformSecret).update(`twilio-auth-token\0${customerId.toLowerCase()}\0${generation}`).digest('hex').slice(0, 32);
}
