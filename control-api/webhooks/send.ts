/**
 * One HTTP attempt of a webhook: signed body, 5 s limit for the whole exchange, through the egress
 * policy (core/net: every resolved address checked, the socket pinned to it, no redirect followed).
 * A refused target is final ("refused"); a transport failure is retried and reads the same whatever
 * happened (no port-scan oracle in the delivery log).
 */
import { sign, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './sign';
import { EgressRefused, type EgressPolicy } from '../../core/net';

export const WEBHOOK_TIMEOUT_MS = 5000;

export type AttemptResult = { kind: 'delivered'; status: number } | { kind: 'retry'; status: number; error: string } | { kind: 'refused'; error: string };

export async function attempt(opts: { uri: string; method: string; secret: string; body: string; egress: EgressPolicy; timeoutMs?: number }): Promise<AttemptResult> {
  const ts = Math.floor(Date.now() / 1000);
  try {
    const res = await opts.egress.open(opts.uri, {
      method: opts.method || 'POST',
      timeoutMs: opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'platform-webhook/1',
        [SIGNATURE_HEADER]: sign(opts.secret, ts, opts.body),
        [TIMESTAMP_HEADER]: String(ts),
      },
      body: opts.body,
    });
    // the answer's body is not wanted
    res.close();
    // 4xx counts as delivered (the receiver saw it); only 5xx and transport errors retry.
    return res.status >= 500 ? { kind: 'retry', status: res.status, error: `HTTP ${res.status}` } : { kind: 'delivered', status: res.status };
  } catch (e) {
    if (e instanceof EgressRefused) return { kind: 'refused', error: `webhook_uri: ${e.message}` };
    return { kind: 'retry', status: 0, error: (e as Error).message };
  }
}
