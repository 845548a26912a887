import type request from 'supertest';

/** What is wrong with an error response's envelope {error:{status,reason,message,request_id}}, if anything. */
export function envelopeProblem(res: request.Response): string | undefined {
  if (res.status < 400) return undefined;
  const e = res.body?.error;
  if (!e || typeof e !== 'object') return `no error object: ${String(res.text).slice(0, 200)}`;
  for (const k of ['status', 'reason', 'message', 'request_id']) if (typeof e[k] !== 'string' || !e[k]) return `error.${k} missing`;
  if (e.request_id !== res.headers['x-request-id']) return 'request_id differs from X-Request-Id';
  return undefined;
}
