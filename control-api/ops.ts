/**
 * /healthz (liveness) and /readyz (Postgres and Redis reachable; rtpengine as media-app's heartbeats
 * report it) on the API port; /metrics
 * (Prometheus) on its own listener, loopback by default (METRICS_LISTEN, `off` to disable), and on
 * the API port only when METRICS_TOKEN is set, to `Authorization: Bearer <METRICS_TOKEN>`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Router, type RequestHandler } from 'express';
import { Registry, collectDefaultMetrics, Histogram, Counter } from 'prom-client';
import type { AppContext } from './context';
import type { Logger } from '../core/logger';
import { authenticationRequired, invalidCredentials } from '../core/errors';
import { readRelayHealth, type RelayHealthEntry } from '../core/calls/relay-health';
import { platformRegistry } from '../core/metrics';
import { routePattern } from './middleware/route-pattern';
import { startMetricsServer } from '../core/metrics-server';

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([p, new Promise<T>((_, rej) => (t = setTimeout(() => rej(new Error('timeout')), ms)))]).finally(() => clearTimeout(t));
}

export interface Metrics {
  registry: Registry;
  /** Records duration and status of every HTTP request. */
  middleware: RequestHandler;
}

export function createMetrics(opts: { defaultMetrics?: boolean; logger?: Logger } = {}): Metrics {
  const accessLog = opts.logger?.isLevelEnabled('info') ?? false;
  const own = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: own });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [own],
  });
  const total = new Counter({ name: 'http_requests_total', help: 'HTTP requests', labelNames: ['method', 'route', 'status'], registers: [own] });
  // the shared metrics of this process (egress refusals, webhook attempts, CDR export: core/metrics.ts)
  const registry = Registry.merge([own, platformRegistry]);
  // bounded: routes are patterns ('unmatched' for the rest) and statuses are few
  const children = new Map<string, { duration: { observe(v: number): void }; total: { inc(): void } }>();
  return {
    registry,
    middleware: (req, res, next) => {
      const start = performance.now();
      res.on('finish', () => {
        const route = routePattern(req) ?? 'unmatched';
        const sec = (performance.now() - start) / 1e3;
        // one labelled child per (method, route, status): prom-client hashes a label object on every call otherwise
        const key = `${req.method} ${route} ${res.statusCode}`;
        let c = children.get(key);
        if (!c) {
          const labels = { method: req.method, route, status: String(res.statusCode) };
          c = { duration: duration.labels(labels), total: total.labels(labels) };
          children.set(key, c);
        }
        c.duration.observe(sec);
        c.total.inc();
        if (accessLog) req.log.info({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(sec * 1e4) / 10 }, 'request');
      });
      next();
    },
  };
}

export function opsRouter(ctx: AppContext, metrics: Metrics): Router {
  const r = Router();
  r.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  r.get('/readyz', async (_req, res) => {
    const check = async (f: () => Promise<unknown>) => {
      try {
        await withTimeout(f(), 2000);
        return 'ok';
      } catch {
        return 'unreachable';
      }
    };
    const [postgres, redis, relays] = await Promise.all([
      check(() => ctx.db.raw('select 1')),
      check(() => ctx.redis.ping()),
      withTimeout(readRelayHealth(ctx.redis, ctx.config.redisKeyPrefix), 2000).catch(() => ({})),
    ]);
    const ok = postgres === 'ok' && redis === 'ok';
    const rtpengine = relayReadiness(relays);
    const degraded = ok && rtpengine?.rtpengine === 'unreachable';
    res.status(ok ? 200 : 503).json({ status: !ok ? 'unavailable' : degraded ? 'degraded' : 'ok', postgres, redis, ...rtpengine });
  });
  const token = ctx.config.metricsToken;
  if (token) {
    r.get(
      '/metrics',
      (req, _res, next) => next(bearerRefusal(req.headers.authorization, token) ?? undefined),
      async (_req, res) => {
        res.setHeader('Content-Type', metrics.registry.contentType);
        res.send(await metrics.registry.metrics());
      },
    );
  }
  return r;
}

/**
 * rtpengine as the media-app nodes' heartbeats report it (core/calls/relay-health): nothing when no
 * node reports; 'unreachable' (the platform is degraded: SRTP / WebRTC legs fail, plain calls work)
 * with what is missing, when any node's rtpengine does not answer.
 */
function relayReadiness(nodes: Record<string, RelayHealthEntry>): { rtpengine: string; missing?: string[] } | null {
  const entries = Object.entries(nodes);
  if (!entries.length) return null;
  const missing = entries.filter(([, e]) => e.status === 'down').map(([node, e]) => `rtpengine at ${e.ng} (node ${node})`);
  if (missing.length) return { rtpengine: 'unreachable', missing };
  if (entries.every(([, e]) => e.status === 'not_configured')) return { rtpengine: 'not_configured' };
  return { rtpengine: entries.some(([, e]) => e.status === 'up') ? 'ok' : 'unknown' };
}

/** Why a /metrics request on the API port is refused (401), or null when it carries the token. */
function bearerRefusal(header: string | undefined, token: string) {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) return authenticationRequired();
  const digest = (v: string) => createHash('sha256').update(v).digest();
  return timingSafeEqual(digest(m[1]!), digest(token)) ? null : invalidCredentials('metrics token invalid');
}

export interface MetricsListener {
  /** The bound address (port 0 in the setting picks a free one). */
  address: { host: string; port: number };
  close(): Promise<void>;
}

/** The /metrics listener: GET /metrics, 404 for anything else, no credentials (bind it privately); core's bare listener over the API's registry. */
export async function startMetricsListener(metrics: Metrics, at: { host: string; port: number }): Promise<MetricsListener> {
  const server = await startMetricsServer(metrics.registry, at);
  return { address: { host: at.host, port: server.port }, close: () => server.close() };
}
