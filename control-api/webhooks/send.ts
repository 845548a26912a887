/** One HTTP attempt of a webhook: signed body, 5 s limit for the whole exchange, guarded target. */
import http from 'node:http';
import https from 'node:https';
import { sign, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './sign';
import { checkUrl, guardedLookup, TargetRefused } from './target';

export const WEBHOOK_TIMEOUT_MS = 5000;

export type AttemptResult =
  | { kind: 'delivered'; status: number }
  | { kind: 'retry'; status: number; error: string }
  | { kind: 'refused'; error: string };

export function attempt(opts: { uri: string; method: string; secret: string; body: string; allowPrivate: boolean; timeoutMs?: number }): Promise<AttemptResult> {
  let url: URL;
  try {
    url = checkUrl(opts.uri, opts.allowPrivate);
  } catch (e) {
    return Promise.resolve({ kind: 'refused', error: (e as Error).message });
  }
  const ts = Math.floor(Date.now() / 1000);
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const req = lib.request(url, {
      method: opts.method || 'POST',
      lookup: guardedLookup(opts.allowPrivate),
      headers: {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(opts.body),
        'User-Agent': 'platform-webhook/1',
        [SIGNATURE_HEADER]: sign(opts.secret, ts, opts.body),
        [TIMESTAMP_HEADER]: String(ts),
      },
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS} ms`)), opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        // 4xx counts as delivered (the receiver saw it); only 5xx and transport errors retry.
        resolve(status >= 500 ? { kind: 'retry', status, error: `HTTP ${status}` } : { kind: 'delivered', status });
      });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      resolve(err instanceof TargetRefused ? { kind: 'refused', error: err.message } : { kind: 'retry', status: 0, error: err.message });
    });
    req.end(opts.body);
  });
}
