/**
 * media-app process entry: the drachtio-srf application that owns calls.
 *   npx tsx media-app/main.ts
 * Environment: core config (DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX, SIP_DOMAIN, DATA_DIR, ...) and
 * media-app/kit/config.ts (DRACHTIO_HOST/PORT/SECRET, MEDIA_APP_NODE_ID, RTP_PORT_MIN/MAX, RTP_ADVERTISED_HOST),
 * MEDIA_APP_METRICS_LISTEN (host:port of its /metrics, default 127.0.0.1:9466, `off`).
 */
import { ConfigError, loadConfig } from '../core/config';
import { createLogger } from '../core/logger';
import { startTracing, TracingConfigError, type Tracing } from '../core/tracing';
import { loadMediaAppConfig } from './kit/config';
import { describeMediaServer } from './kit/media-server';
import { startMediaApp } from './app';
import { nodeLabel } from '../core/calls/node-keys';
import { collectDefaultMetrics } from 'prom-client';
import { platformRegistry } from '../core/metrics';
import { MetricsListenError, metricsListenFromEnv, startMetricsServer, type MetricsServer } from '../core/metrics-server';

/** media-app's /metrics (calls_ended_total, egress_refusals_total... of core/metrics.ts, process stats). */
const DEFAULT_METRICS_LISTEN = '127.0.0.1:9466';

async function main(): Promise<void> {
  let config;
  let app;
  let metricsAt: { host: string; port: number } | null;
  let tracing: Tracing | null = null;
  try {
    config = loadConfig();
    app = loadMediaAppConfig();
    metricsAt = metricsListenFromEnv('MEDIA_APP_METRICS_LISTEN', DEFAULT_METRICS_LISTEN);
    tracing = startTracing('media-app');
  } catch (err) {
    if (err instanceof ConfigError || err instanceof MetricsListenError || err instanceof TracingConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel, 'media-app');
  if (tracing) logger.info({ otlp: tracing.endpoint }, 'tracing on');
  // a busy metrics port is reported, not fatal (calls matter more than their counters)
  let metrics: MetricsServer | null = null;
  if (metricsAt) {
    collectDefaultMetrics({ register: platformRegistry });
    metrics = await startMetricsServer(platformRegistry, metricsAt).catch((err: unknown) => {
      logger.error({ err: (err as Error).message }, `MEDIA_APP_METRICS_LISTEN ${metricsAt!.host}:${metricsAt!.port}: cannot listen; no media-app metrics`);
      return null;
    });
  }
  const running = await startMediaApp({ config, app, logger });
  logger.info(
    { node: running.nodeId, node_label: nodeLabel(running.nodeId), media_server: describeMediaServer(app.mediaServer), metrics: metrics ? `${metricsAt!.host}:${metrics.port}` : 'off' },
    'media-app ready',
  );
  if (process.env.MEDIA_APP_READY_LINE) process.stdout.write(`READY ${JSON.stringify({ node: running.nodeId })}\n`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // SIGTERM drains (no new calls, live ones finish up to DRAIN_TIMEOUT_SEC); SIGINT stops at once
    if (signal === 'SIGTERM' && app.drainTimeoutMs > 0) {
      logger.info({ signal, drain_timeout_ms: app.drainTimeoutMs }, 'draining before shutdown');
      await running.drain(app.drainTimeoutMs);
    }
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await running.stop();
    await metrics?.close();
    await tracing?.shutdown().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGTERM', () => {
    // a second SIGTERM during a drain stops at once
    if (stopping && running.draining) void running.stop().then(() => process.exit(0));
    else void shutdown('SIGTERM');
  });
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
