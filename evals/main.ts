/**
 * The evals worker as a process (`npx tsx evals/main.ts`, beside the platform): reads EVALS_*
 * (evals/config.ts) and the database settings, claims eval runs and places their simulated calls
 * through the SIP edge. Bad settings stop it with one line each; SIGINT/SIGTERM end the runs it
 * carries (failed) and exit.
 */
import { Redis } from 'ioredis';
import { loadConfig } from '../core/config';
import { createDb } from '../core/db/knex';
import { createLogger } from '../core/logger';
import { loadEvalsConfig } from './config';
import { EvalWorker } from './worker';
import { yieldCores } from './priority';
import { eventStreamKey } from '../core/events/bus';
import { storageBackend } from '../core/storage/backend';

async function main(): Promise<void> {
  const log = createLogger(process.env.LOG_LEVEL ?? 'info', 'evals');
  const config = loadEvalsConfig();
  // before any call: the simulated callers never take a core the platform under test wants
  const yielded = yieldCores(config.nice);
  if (yielded.failed.length) log.warn({ nice: config.nice, failed: yielded.failed }, 'some threads kept their priority');
  const platform = loadConfig(process.env, { persistSecret: false });
  const db = createDb(platform.databaseUrl);
  // the platform's events (a call hung up, an ai_talk ended) end the observations' settle waits
  const redis = new Redis(platform.redisUrl, { maxRetriesPerRequest: 2 });
  redis.on('error', (err: unknown) => log.warn({ err: String(err) }, 'redis connection error'));
  // the calls' audio tracks go to the platform's object store (local disk under DATA_DIR, or S3)
  const worker = new EvalWorker({ db, redis, eventStream: eventStreamKey(platform.redisKeyPrefix), config, logger: log, storage: storageBackend(platform).files });
  worker.start();
  log.info({ edge: `${config.edge.host}:${config.edge.port}`, worker: worker.name, nice: config.nice, threads: yielded.threads }, 'evals worker started');
  const shutdown = (signal: string) => {
    log.info({ signal }, 'shutting down');
    void worker
      .close()
      .then(() => db.destroy())
      .then(() => redis.disconnect())
      .then(() => process.exit(0));
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
