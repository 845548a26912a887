/**
 * control-api process: load config (exit 1 with one line per bad variable), migrate, create the
 * first-start admin, start the account jobs (control-api/jobs), listen, attach the event services
 * and attachments (control-api/ws/services.ts), and shut down cleanly on SIGINT/SIGTERM.
 */
import { useKeySecret } from '../core/secrets/keys';
import http from 'node:http';
import { loadConfig, ConfigError } from '../core/config';
import { createLogger } from '../core/logger';
import { startTracing } from '../core/tracing';
import { createDb, migrate } from '../core/db/knex';
import { createContext, createRedis } from './context';
import { createApp } from './app';
import { bootstrapAdmin } from './bootstrap';
import { startJobs } from './jobs';
import { startEventServices } from './ws/services';
import { answerClientErrors } from './client-error';
import { startMetricsListener, type MetricsListener } from './ops';
import type { Logger } from '../core/logger';

/** Set once a signal asked to stop: start-up steps failing after that are part of stopping, not errors. */
let stopping = false;

async function main(): Promise<void> {
  const config = configOrExit();
  const tracing = tracingOrExit();
  const logger = createLogger(config.logLevel, 'control-api');
  if (tracing) logger.info({ otlp: tracing.endpoint }, 'tracing on');
  // What is running so far; a signal at any point of start-up closes exactly that and exits 0.
  let server: http.Server | null = null;
  let events: { close(): Promise<void> } | null = null;
  let jobs: { close(): Promise<void> } | null = null;
  let metricsListener: MetricsListener | null = null;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    const s = server;
    if (s) {
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeIdleConnections();
      });
    }
    await metricsListener?.close();
    await events?.close().catch((err: unknown) => logger.warn({ err }, 'event services close failed'));
    await jobs?.close().catch((err: unknown) => logger.warn({ err }, 'jobs close failed'));
    await db.destroy();
    redis.disconnect();
    await tracing?.shutdown().catch(() => undefined);
    process.exit(0);
  };
  const db = createDb(config.databaseUrl, { poolMax: config.databasePoolMax });
  useKeySecret(config.jwtSecret); // migration 0958 seals the stored AI vendor keys with it
  const ran = await migrate(db);
  if (ran.length) logger.info({ migrations: ran }, 'migrations applied');
  const redis = createRedis(config.redisUrl);
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  const ctx = createContext({ config, db, redis, logger });

  const boot = await bootstrapAdmin(db, config);
  if (boot) printBootstrap(boot, config.publicUrl);

  jobs = await startJobs(ctx);
  const { app, metrics } = createApp(ctx, { defaultMetrics: true });
  const srv = http.createServer(app);
  server = srv;
  srv.keepAliveTimeout = 65_000;
  answerClientErrors(srv);
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(config.httpPort, config.httpHost, () => resolve());
  });
  events = await startEventServices(srv, ctx);
  if (config.metricsListen) metricsListener = await startMetrics(metrics, config.metricsListen, logger);
  const addr = srv.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.httpPort;
  logger.info({ url: `http://${config.httpHost}:${port}` }, 'control-api listening');
  process.stdout.write(`control-api listening on http://${config.httpHost}:${port} (public URL ${config.publicUrl})\n`);
}

/** The configuration, or exit 1 with one line per bad variable. */
function configOrExit(): ReturnType<typeof loadConfig> {
  try {
    return loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`control-api: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
}

function tracingOrExit(): ReturnType<typeof startTracing> {
  try {
    return startTracing('control-api');
  } catch (e) {
    process.stderr.write(`control-api: ${(e as Error).message}\n`);
    process.exit(1);
  }
}

/** The first start's admin login and accesskey, on stdout. */
function printBootstrap(boot: NonNullable<Awaited<ReturnType<typeof bootstrapAdmin>>>, publicUrl: string): void {
  process.stdout.write(
    [
      '',
      '  First start: an admin account was created (also saved to ' + boot.file + ')',
      `    login:     POST ${publicUrl}/auth/login  username=${boot.username}  password=${boot.password}`,
      `    accesskey: ${boot.accesskey}`,
      `    try:       curl '${publicUrl}/v1.0/customer?accesskey=${boot.accesskey}'`,
      '',
    ].join('\n') + '\n',
  );
}

// metrics are not worth refusing service for: a busy port is reported and the API keeps running
async function startMetrics(metrics: Parameters<typeof startMetricsListener>[0], at: Parameters<typeof startMetricsListener>[1], logger: Logger): Promise<MetricsListener | null> {
  const shown = `${at.host.includes(':') ? `[${at.host}]` : at.host}:${at.port}`;
  const listener = await startMetricsListener(metrics, at).catch((err: unknown) => {
    logger.warn({ err: String(err) }, 'metrics listener not started');
    process.stderr.write(`control-api: metrics listener on ${shown} not started: ${String(err)}\n`);
    return null;
  });
  if (listener) process.stdout.write(`metrics on http://${shown.replace(/:\d+$/, ':' + listener.address.port)}/metrics\n`);
  return listener;
}

main().catch((err: unknown) => {
  if (stopping) return; // stop() exits
  process.stderr.write(`control-api: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
