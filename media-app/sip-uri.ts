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
