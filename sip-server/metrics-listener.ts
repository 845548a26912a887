/**
 * sip-server's Prometheus /metrics (sip_* counters of metrics.ts and the process's default metrics)
 * on its own listener: SIP_METRICS_LISTEN=host:port (default 127.0.0.1:9465, `off` to disable).
 * No credentials: bind it to loopback or a private network (like control-api's METRICS_LISTEN).
 */
import http from 'node:http';
import { collectDefaultMetrics } from 'prom-client';
import { parseHostPort } from '../core/config';
import { sipRegistry } from './metrics';

export const DEFAULT_SIP_METRICS_LISTEN = '127.0.0.1:9465';

/** The address to bind, null when off; throws a one-line message naming the variable on a bad value. */
export function sipMetricsListen(env: NodeJS.ProcessEnv = process.env): { host: string; port: number } | null {
  const v = (env.SIP_METRICS_LISTEN ?? DEFAULT_SIP_METRICS_LISTEN).trim();
  if (v.toLowerCase() === 'off') return null;
  const at = parseHostPort(v);
  if (!at) throw new Error(`SIP_METRICS_LISTEN: must be host:port (e.g. ${DEFAULT_SIP_METRICS_LISTEN}) or off`);
  return at;
}

let defaults = false;

export interface SipMetricsListener {
  port: number;
  close(): Promise<void>;
}

export async function startSipMetricsListener(at: { host: string; port: number }, opts: { defaultMetrics?: boolean } = {}): Promise<SipMetricsListener> {
  if (opts.defaultMetrics && !defaults) {
    defaults = true;
    collectDefaultMetrics({ register: sipRegistry });
  }
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    sipRegistry.metrics().then(
      (body) => res.writeHead(200, { 'Content-Type': sipRegistry.contentType }).end(req.method === 'HEAD' ? undefined : body),
      () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => resolve());
  });
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : at.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
