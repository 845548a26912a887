/**
 * control-api process: load config (exit 1 with one line per bad variable), migrate, create the
 * first-start admin, start the account jobs (control-api/jobs), listen, attach the event services
 * and attachments (control-api/ws/services.ts), and shut down cleanly on SIGINT/SIGTERM.
 */
import http from 'node:http';
import { loadConfig, ConfigError } from '../core/config';
import { createLogger } from '../core/logger';
import { createDb, migrate } from '../core/db/knex';
import { createContext, createRedis } from './context';
import { createApp } from './app';
import { bootstrapAdmin } from './bootstrap';
import { startJobs } from './jobs';
import { startEventServices } from './ws/services';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`control-api: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  const logger = createLogger(config.logLevel, 'control-api');
  const db = createDb(config.databaseUrl, { poolMax: config.databasePoolMax });
  const ran = await migrate(db);
  if (ran.length) logger.info({ migrations: ran }, 'migrations applied');
  const redis = createRedis(config.redisUrl);
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  const ctx = createContext({ config, db, redis, logger });

  const boot = await bootstrapAdmin(db, config);
  if (boot) {
    process.stdout.write(
      [
        '',
        '  First start: an admin account was created (also saved to ' + boot.file + ')',
        `    login:     POST ${config.publicUrl}/auth/login  username=${boot.username}  password=${boot.password}`,
        `    accesskey: ${boot.accesskey}`,
        `    try:       curl '${config.publicUrl}/v1.0/customer?accesskey=${boot.accesskey}'`,
        '',
      ].join('\n') + '\n',
    );
  }

  const jobs = await startJobs(ctx);
  const { app } = createApp(ctx, { defaultMetrics: true });
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.httpPort, config.httpHost, () => resolve());
  });
  const events = await startEventServices(server, ctx);
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.httpPort;
  logger.info({ url: `http://${config.httpHost}:${port}` }, 'control-api listening');
  process.stdout.write(`control-api listening on http://${config.httpHost}:${port} (public URL ${config.publicUrl})\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    await events.close().catch((err: unknown) => logger.warn({ err }, 'event services close failed'));
    await jobs.close().catch((err: unknown) => logger.warn({ err }, 'jobs close failed'));
    await db.destroy();
    redis.disconnect();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`control-api: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
