/**
 * The part of Telnyx's API v2 that POST /providers/setup needs: check an API key (GET /balance) and
 * create a credential connection (POST /credential_connections), the carrier-side SIP trunk our
 * provider registers nothing with but authenticates its INVITEs to (digest user and password).
 * Every request goes through the egress policy; the base URL is TELNYX_API_URL (default
 * https://api.telnyx.com/v2), read when asked.
 */
import type { EgressPolicy } from '../net';

export const TELNYX_DEFAULT_API_URL = 'https://api.telnyx.com/v2';
/** Where Telnyx takes the INVITEs of a credential connection. */
export const TELNYX_SIP_HOST = 'sip.telnyx.com';

export function telnyxApiUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.TELNYX_API_URL || TELNYX_DEFAULT_API_URL).replace(/\/+$/, '');
}

/** The carrier refused the key (401/403), or answered something else than success. */
export class TelnyxError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly authFailed = false,
  ) {
    super(message);
  }
}

export interface CredentialConnection {
  id: string;
  user_name: string;
}

export class TelnyxClient {
  constructor(
    private readonly base: string,
    private readonly apiKey: string,
    private readonly egress: EgressPolicy,
  ) {}

  private async call(method: 'GET' | 'POST', path: string, body?: object): Promise<Record<string, unknown>> {
    const res = await this.egress.fetch(`${this.base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.apiKey}`, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      timeoutMs: 10_000,
      maxBytes: 256 * 1024,
    });
    if (res.status === 401 || res.status === 403) throw new TelnyxError(res.status, 'the carrier refused the API key', true);
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
    } catch {
      /* an error page */
    }
    if (res.status < 200 || res.status > 299) {
      const first = Array.isArray(json.errors) ? (json.errors[0] as { title?: unknown; detail?: unknown } | undefined) : undefined;
      const why = typeof first?.detail === 'string' ? first.detail : typeof first?.title === 'string' ? first.title : `HTTP ${res.status}`;
      throw new TelnyxError(res.status, `the carrier answered ${res.status}: ${why.slice(0, 200)}`);
    }
    return json;
  }

  /** Resolves when the key works (it can read the account's balance). */
  async validate(): Promise<void> {
    await this.call('GET', '/balance');
  }

  async createCredentialConnection(name: string, userName: string, password: string): Promise<CredentialConnection> {
    const r = await this.call('POST', '/credential_connections', { connection_name: name, user_name: userName, password, active: true });
    const data = r.data as { id?: unknown; user_name?: unknown } | undefined;
    if (!data || (typeof data.id !== 'string' && typeof data.id !== 'number')) throw new TelnyxError(502, 'the carrier answered without a connection id');
    return { id: String(data.id), user_name: typeof data.user_name === 'string' ? data.user_name : userName };
  }
}
