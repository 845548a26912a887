/**
 * A bare Prometheus /metrics listener for the processes without an HTTP server of their own
 * (sip-server: SIP_METRICS_LISTEN, media-app: MEDIA_APP_METRICS_LISTEN). GET or HEAD /metrics, 404
 * for anything else, no credentials: bind it to loopback or a private network.
 */
import http from 'node:http';
import type { Registry } from 'prom-client';
import { parseHostPort } from './config';
import { guardServer } from './net/socket-guard';

/** `name` from the environment (or `dflt`): the address to bind, null for `off`; throws naming the variable. */
export function metricsListenFromEnv(name: string, dflt: string, env: NodeJS.ProcessEnv = process.env): { host: string; port: number } | null {
  const v = (env[name] ?? dflt).trim();
  if (v.toLowerCase() === 'off') return null;
  const at = parseHostPort(v);
  if (!at) throw new MetricsListenError(`${name}: must be host:port (e.g. ${dflt}) or off`);
  return at;
}

export class MetricsListenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MetricsListenError';
  }
}

export interface MetricsServer {
  /** The bound port (0 in the setting picks a free one). */
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(registry: Registry, at: { host: string; port: number }): Promise<MetricsServer> {
  const server = guardServer(
    http.createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
        return;
      }
      registry.metrics().then(
        (body) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(req.method === 'HEAD' ? undefined : body),
        () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics unavailable\n'),
      );
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => resolve());
  });
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : at.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
