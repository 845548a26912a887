/**
 * Desk-phone and softphone configuration for an extension, one renderer per phone family. The family
 * comes from the `format` query parameter when given, else from the User-Agent; a User-Agent naming
 * no known family gets a 400 without credentials (router.ts), never a guess.
 */
import type { ProvisioningAccount, RenderedConfig } from './account';
import { renderLinphone } from './linphone';
import { renderYealink } from './yealink';
import { renderGrandstream } from './grandstream';
import { renderPolycom } from './polycom';
import { renderSnom } from './snom';
import { renderCisco } from './cisco';
import { renderFanvil } from './fanvil';

export type { ProvisioningAccount, RenderedConfig } from './account';

export const PHONE_FORMATS = ['linphone', 'yealink', 'grandstream', 'polycom', 'snom', 'cisco', 'fanvil'] as const;
export type PhoneFormat = (typeof PHONE_FORMATS)[number];

const RENDERERS: Record<PhoneFormat, (a: ProvisioningAccount) => RenderedConfig> = {
  linphone: renderLinphone,
  yealink: renderYealink,
  grandstream: renderGrandstream,
  polycom: renderPolycom,
  snom: renderSnom,
  cisco: renderCisco,
  fanvil: renderFanvil,
};

export function isPhoneFormat(v: unknown): v is PhoneFormat {
  return typeof v === 'string' && (PHONE_FORMATS as readonly string[]).includes(v);
}

/**
 * User-Agent patterns as the phones send them: "Yealink SIP-T54W 96.86.0.100", "PolycomVVX-VVX_450-UA/6.4.0"
 * or "Poly/7.0 Edge E350", "Grandstream Model HW GXP2170 SW 1.0.11.23", "snom D785/10.1.54.13",
 * "Cisco/SPA504G-7.6.2", "Cisco-CP-8841-3PCC/11.3", "Fanvil X6U 2.12.x", and the Linphone apps'
 * "LinphoneAndroid/5.0 (…) LinphoneSDK/5.2", "LinphoneiOS/…", "Linphone Desktop/…".
 */
const UA_FAMILIES: [RegExp, PhoneFormat][] = [
  [/yealink/i, 'yealink'],
  [/grandstream/i, 'grandstream'],
  [/polycom|(^|[^a-z])poly\//i, 'polycom'],
  [/(^|[^a-z])snom/i, 'snom'],
  [/^cisco[/-]|(^|[^a-z])cisco[/ ]/i, 'cisco'],
  [/fanvil/i, 'fanvil'],
  [/linphone/i, 'linphone'],
];

/** The family a User-Agent header names, or null when it names none of them. */
export function formatFromUserAgent(ua: string | undefined): PhoneFormat | null {
  const s = ua ?? '';
  for (const [re, f] of UA_FAMILIES) if (re.test(s)) return f;
  return null;
}

export function renderConfig(format: PhoneFormat, account: ProvisioningAccount): RenderedConfig {
  return RENDERERS[format](account);
}
