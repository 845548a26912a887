/**
 * The platform calls the phone makes: its configuration (served next to the page), the agent
 * login (POST /auth/login) and the agent's browser SIP credential
 * (POST/DELETE /v1.0/service_agents/me/sip_credentials). Same origin as the page.
 */
import type { SipCredentials } from './phone';

export interface PhoneConfig {
  /** The SIP WebSocket URL (SIP_WSS_PUBLIC_URL), or null when the platform does not set one. */
  ws_url: string | null;
  sip_domain: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function json<T>(res: Response): Promise<T> {
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const msg = (body as { error?: { message?: string } } | null)?.error?.message ?? (text || res.statusText);
    throw new ApiError(res.status, msg);
  }
  return body as T;
}

const base = () => new URL('..', window.location.href).pathname.replace(/\/$/, '');

export async function loadConfig(): Promise<PhoneConfig> {
  return json<PhoneConfig>(await fetch(new URL('config.json', window.location.href), { credentials: 'same-origin' }));
}

/** POST /auth/login; the login token. */
export async function agentLogin(username: string, password: string): Promise<string> {
  const res = await fetch(`${base()}/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
    credentials: 'same-origin',
  });
  if (res.status === 400) throw new ApiError(400, 'wrong username or password');
  return (await json<{ token: string }>(res)).token;
}

interface IssuedCredential {
  username: string;
  password: string;
  uri: string;
  ws_url: string | null;
  expire: string;
}

/** The login token as a header; null: the page's own login cookie (a console of the same origin). */
const bearer = (token: string | null): Record<string, string> => (token ? { Authorization: `Bearer ${token}` } : {});

/** The agent's short-lived SIP credential for its extension. */
export async function agentSipCredentials(token: string | null, fallbackWsUrl: string): Promise<SipCredentials & { expire: string }> {
  const res = await fetch(`${base()}/v1.0/service_agents/me/sip_credentials`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...bearer(token) },
    body: '{}',
    credentials: 'same-origin',
  });
  const c = await json<IssuedCredential>(res);
  const wsUrl = c.ws_url ?? fallbackWsUrl;
  if (!wsUrl) throw new ApiError(0, 'the platform sets no SIP WebSocket URL: type one');
  return { wsUrl, uri: c.uri, authorizationUser: c.username, password: c.password, expire: c.expire };
}

/**
 * Revokes the agent's browser credentials (sign-out) and, with a token of its own, ends that login session
 * on the server (POST /auth/logout; embedded in the console, the console's sign-out ends its session).
 * Errors are ignored (the token may be gone).
 */
export async function agentSignOut(token: string | null): Promise<void> {
  await fetch(`${base()}/v1.0/service_agents/me/sip_credentials`, { method: 'DELETE', headers: bearer(token), credentials: 'same-origin' }).catch(() => undefined);
  if (token) await fetch(`${base()}/auth/logout`, { method: 'POST', headers: bearer(token), credentials: 'same-origin' }).catch(() => undefined);
}
