/**
 * The event socket as a process (`npx tsx esl/main.ts`): reads ESL_* (esl/config.ts), listens when
 * ESL_LISTEN is set, and says so and exits when it is not. Bad settings stop it with one line each.
 */
import { createLogger } from '../core/logger';
import { loadEslConfig } from './config';
import { EslServer } from './server';

async function main(): Promise<void> {
  const log = createLogger(process.env.LOG_LEVEL ?? 'info', 'esl');
  const cfg = loadEslConfig();
  if (!cfg) {
    log.info('ESL_LISTEN is not set: the event socket is off');
    return;
  }
  const server = new EslServer({
    password: cfg.password,
    profile: { name: 'drachtio_mrf', address: cfg.sipAddress },
    heartbeatMs: cfg.heartbeatMs,
    authTimeoutMs: cfg.authTimeoutMs,
    authLimit: cfg.authLimit,
    maxSessions: cfg.maxSessions,
  });
  server.on('rejected', (address, reason) => log.warn({ address, reason }, 'event socket connection refused'));
  server.on('failed', (err) => log.error({ err }, 'event socket command failed'));
  const at = await server.listen(cfg.listen.port, cfg.listen.host);
  log.info({ address: at.address, port: at.port, sipProfile: cfg.sipAddress }, 'event socket listening');
  const shutdown = (signal: string) => {
    log.info({ signal }, 'shutting down');
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
