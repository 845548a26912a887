/**
 * Desk-phone and softphone configuration for an extension, one renderer per phone family. The family
 * comes from the `format` query parameter when given, else from the User-Agent, else Linphone (the
 * QR-code target).
 */
import type { ProvisioningAccount, RenderedConfig } from './account';
import { renderLinphone } from './linphone';
import { renderYealink } from './yealink';
import { renderGrandstream } from './grandstream';
import { renderPolycom } from './polycom';
import { renderSnom } from './snom';

export type { ProvisioningAccount, RenderedConfig } from './account';

export const PHONE_FORMATS = ['linphone', 'yealink', 'grandstream', 'polycom', 'snom'] as const;
export type PhoneFormat = (typeof PHONE_FORMATS)[number];

const RENDERERS: Record<PhoneFormat, (a: ProvisioningAccount) => RenderedConfig> = {
  linphone: renderLinphone,
  yealink: renderYealink,
  grandstream: renderGrandstream,
  polycom: renderPolycom,
  snom: renderSnom,
};

export function isPhoneFormat(v: unknown): v is PhoneFormat {
  return typeof v === 'string' && (PHONE_FORMATS as readonly string[]).includes(v);
}

/** Family named by a User-Agent header; Poly phones say "PolycomVVX-…" or "Poly/…". */
export function formatFromUserAgent(ua: string | undefined): PhoneFormat {
  const s = (ua ?? '').toLowerCase();
  if (s.includes('yealink')) return 'yealink';
  if (s.includes('grandstream')) return 'grandstream';
  if (s.includes('polycom') || /\bpoly\b/.test(s)) return 'polycom';
  if (s.includes('snom')) return 'snom';
  return 'linphone';
}

export function renderConfig(format: PhoneFormat, account: ProvisioningAccount): RenderedConfig {
  return RENDERERS[format](account);
}
