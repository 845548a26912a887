/**
 * The part of Paddle's Billing API that POST /billing_account/paddle_portal_session needs: create a
 * customer portal session (POST /customers/{customer_id}/portal-sessions) and read its overview URL.
 * Every request goes through the egress policy; the base URL is PADDLE_API_URL (default
 * https://api.paddle.com) and the key PADDLE_API_KEY, both read when asked.
 */
import type { EgressPolicy } from '../net';

export const PADDLE_DEFAULT_API_URL = 'https://api.paddle.com';
/** A Paddle customer id as Paddle writes them (`ctm_` and lower-case letters and digits). */
export const PADDLE_CUSTOMER_ID = /^ctm_[a-z0-9]{10,64}$/;

export function paddleApiUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.PADDLE_API_URL || PADDLE_DEFAULT_API_URL).replace(/\/+$/, '');
}

/** The API key, or null when PADDLE_API_KEY is unset or empty. */
export function paddleApiKey(env: NodeJS.ProcessEnv = process.env): string | null {
  return env.PADDLE_API_KEY?.trim() || null;
}

/** Paddle answered something else than a portal session; `message` names only the status, never Paddle's text. */
export class PaddleError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class PaddleClient {
  constructor(
    private readonly base: string,
    private readonly apiKey: string,
    private readonly egress: EgressPolicy,
  ) {}

  /** The URL of a fresh customer portal session (valid for a limited time) of a Paddle customer. */
  async portalSessionUrl(customerId: string): Promise<string> {
    if (!PADDLE_CUSTOMER_ID.test(customerId)) throw new PaddleError(0, 'not a Paddle customer id');
    const res = await this.egress.fetch(`${this.base}/customers/${customerId}/portal-sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${this.apiKey}`, Accept: 'application/json', 'Content-Type': 'application/json' },
      body: '{}',
      timeoutMs: 10_000,
      maxBytes: 256 * 1024,
    });
    if (res.status < 200 || res.status > 299) throw new PaddleError(res.status, `Paddle answered ${res.status}`);
    let json: unknown;
    try {
      json = JSON.parse(res.body.toString('utf8'));
    } catch {
      throw new PaddleError(res.status, 'Paddle answered something else than JSON');
    }
    const url = (json as { data?: { urls?: { general?: { overview?: unknown } } } } | null)?.data?.urls?.general?.overview;
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw new PaddleError(res.status, 'Paddle answered without a portal URL');
    return url;
  }
}
