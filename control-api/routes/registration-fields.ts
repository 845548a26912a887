/**
 * The `registration` field of providers and trunks: settings for registering to a carrier's
 * registrar (media-app/outreg does the registering). Written as an object (null removes it); read
 * back with the password left out and the live state added (state, expires_at, last_error: read-only).
 * A trunk's registrar is the customer's input: its host must pass the egress policy.
 */
import { z } from 'zod';
import { invalidArgument } from '../../core/errors';
import { refuseMovedSecret } from '../../core/secrets/key-destination';
import { sipLiteralRefusal, type SipEgress } from '../../core/calls/sip-destination';
import type { RegistrationSettings } from '../../core/repos/outbound-registrations';

/** A SIP server's address as an operator or customer writes it: host, IP or host:port (providers' hostname too). */
export const sipHost = z
  .string()
  .max(255)
  .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)(:\d{1,5})?$/, 'host, IP or host:port');

const hostPort = sipHost.refine((v) => {
  const p = /:(\d{1,5})$/.exec(v.replace(/^\[[^\]]*\]/, ''));
  return !p || (Number(p[1]) >= 1 && Number(p[1]) <= 65535);
}, 'port 1-65535');

export const registrationInput = z
  .object({
    registrar: hostPort.describe('the registrar: host, IP or host:port (the REGISTER goes there)'),
    domain: z
      .string()
      .max(255)
      .regex(/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/, 'a domain name')
      .optional()
      .describe("the AOR's domain (sip:username@domain); default: the registrar's host"),
    username: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9._+~!$&'()*,;=%-]+$/, 'a SIP user part'),
    password: z
      .string()
      .max(128)
      .regex(/^[^\r\n"\\]*$/, 'one line without " or \\')
      .optional()
      .describe('write-only; empty keeps the current one'),
    expires: z.number().int().min(60).max(86400).optional().describe('requested expiry in seconds (default 3600); the registrar may grant less'),
    transport: z.enum(['udp', 'tcp']).optional(),
  })
  .strict()
  .nullable();

export type RegistrationInput = z.infer<typeof registrationInput>;

export const RegistrationSchema = z
  .object({
    registrar: z.string(),
    domain: z.string(),
    username: z.string(),
    expires: z.number(),
    transport: z.enum(['udp', 'tcp']),
    state: z.enum(['unregistered', 'registering', 'registered', 'failed']),
    expires_at: z.string(),
    last_error: z.string().describe('the last failure: a SIP status ("403 Forbidden") or a transport problem, nothing more'),
  })
  .nullable();

/**
 * The settings to store, or null to remove; checked as a whole (a new registration needs a password;
 * a customer's registrar must be allowed by the egress policy). Throws a 400 naming the field.
 */
export function registrationSettings(
  input: NonNullable<RegistrationInput> | null,
  current: Pick<RegistrationSettings, 'registrar' | 'password'> | null,
  opts: { egress?: SipEgress },
): RegistrationSettings | null {
  if (!input) return null;
  const password = input.password ?? '';
  if (!password && !current) throw invalidArgument('registration.password: is required', [{ field: 'registration.password', issue: 'is required' }]);
  // the stored password answers only the registrar it was stored for (core/secrets/key-destination.ts)
  refuseMovedSecret({
    field: 'registration.password',
    placeField: 'registration.registrar',
    stored: !!current?.password,
    kept: !password,
    before: (current?.registrar ?? '').toLowerCase(),
    after: input.registrar.toLowerCase(),
  });
  if (opts.egress) {
    const refused = sipLiteralRefusal(`sip:${input.registrar}`, opts.egress);
    if (refused && !refused.ok) throw invalidArgument(`registration.registrar: ${refused.message}`, [{ field: 'registration.registrar', issue: refused.message }]);
  }
  return {
    registrar: input.registrar.toLowerCase(),
    domain: (input.domain ?? '').toLowerCase(),
    username: input.username,
    password,
    expires: input.expires ?? 3600,
    transport: input.transport ?? 'udp',
  };
}
