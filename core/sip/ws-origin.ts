// Which web pages may open SIP over WebSocket (docs/security.md "Origin checks"); sip-server checks each
// handshake with it (transport/ws.ts) and sip-config the allowed list it is given. A browser always
// sends Origin on a WebSocket handshake, so a page of another site cannot use the platform's SIP
// server with a visitor's address (or, later, a visitor's credentials) unless its origin is listed.
// A handshake without Origin is not a browser page (a desk phone, baresip, a SIP library): allowed.
// "*" in the list allows every origin; "null" (sandboxed frames, file: pages) only through "*".

/** The canonical form of an origin (`scheme://host[:port]`, lowercase, default port dropped); null when it is not one. */
export function canonicalOrigin(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin === 'null') return null;
  // nothing but scheme://host[:port] (an optional trailing slash)
  if (u.username || u.password || u.search || u.hash || (u.pathname !== '/' && u.pathname !== '')) return null;
  return u.origin;
}

/** The check of one handshake's Origin header (undefined: no header). */
export type OriginCheck = (origin: string | undefined) => boolean;

export function originCheck(allowed: readonly string[]): OriginCheck {
  if (allowed.includes('*')) return () => true;
  const set = new Set(allowed.map((o) => canonicalOrigin(o)).filter((o): o is string => o !== null));
  return (origin) => {
    if (origin === undefined) return true;
    const c = canonicalOrigin(origin);
    return c !== null && set.has(c);
  };
}
