/**
 * What the user typed into the dial field, as a SIP URI: a SIP URI as is (`sip:` / `sips:`), a
 * `user@host` address, or a phone number / extension at the phone's own domain. Spaces, dashes,
 * dots and parentheses of a phone number are dropped; anything else is refused.
 */
export function toSipUri(target: string, domain: string): string {
  const t = target.trim();
  if (!t) throw new Error('nothing to dial');
  if (/^sips?:[^\s@]+@[^\s@]+$/i.test(t)) return t;
  if (/^[^\s@:]+@[A-Za-z0-9.-]+(:\d{1,5})?$/.test(t)) return `sip:${t}`;
  const number = t.replace(/[\s().-]/g, '');
  if (/^\+?[0-9*#]{1,32}$/.test(number)) return `sip:${encodeURIComponent(number).replace(/%2B/g, '+')}@${domain}`;
  if (/^[A-Za-z0-9_~!$&'*+,;=-]{1,64}$/.test(t)) return `sip:${t}@${domain}`;
  throw new Error(`cannot dial "${t}": type a number, an extension or a SIP URI`);
}
