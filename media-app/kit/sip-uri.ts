/** Just enough SIP URI parsing for routing decisions: scheme, user, host, port. */
export interface SipUri {
  scheme: 'sip' | 'sips' | 'tel';
  user: string;
  host: string;
  port: number | undefined;
}

export function parseSipUri(uri: string): SipUri | null {
  const tel = /^tel:([^;]+)/i.exec(uri);
  if (tel) return { scheme: 'tel', user: tel[1]!, host: '', port: undefined };
  const m = /^(sips?):(?:([^@;]+)@)?(\[[^\]]+\]|[^:;?>]+)(?::(\d+))?/i.exec(uri.trim());
  if (!m) return null;
  let user = m[2] ?? '';
  try {
    user = decodeURIComponent(user.split(':')[0]!);
  } catch {
    return null;
  }
  return { scheme: m[1]!.toLowerCase() as 'sip' | 'sips', user, host: m[3]!.toLowerCase(), port: m[4] ? Number(m[4]) : undefined };
}

/** RFC 3261 user part: unreserved and user-unreserved characters stay, `%XX` escapes stay, anything else is escaped. */
export function escapeSipUser(user: string): string {
  return user.replace(/%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-_.!~*'()&=+$,;?/%]/gu, (c) => [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}

/** A From/To header value: the display name as an RFC 3261 quoted-string (`\` and `"` escaped, control characters removed). */
export function nameAddr(uri: string, displayName?: string): string {
  const name = (displayName ?? '').replace(/[\u0000-\u001f\u007f]/g, '').replace(/[\\"]/g, (c) => `\\${c}`); // eslint-disable-line no-control-regex -- matches control characters on purpose, to remove them
  return name ? `"${name}" <${uri}>` : `<${uri}>`;
}
