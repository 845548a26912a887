/**
 * The whole platform in this process for fault tests: sip-server (stack + drachtio layer), a
 * media-app node and control-api (HTTP server, optionally webhook delivery) on a database the test
 * chooses (its own Postgres, which it may stop) and the test Redis under a fresh key prefix.
 */
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { startSipServer } from '../../../testkit/media-app/harness';
import { loadConfig, type Config } from '../../../core/config';
import { loadMediaAppConfig } from '../../../media-app/kit/config';
import { startMediaApp, type MediaApp } from '../../../media-app/app';
import { createContext, createRedis, type AppContext } from '../../../control-api/context';
import { createApp } from '../../../control-api/app';
import { startWebhooks, type WebhookOptions, type WebhookService } from '../../../control-api/webhooks';
import { freePort, portBlock } from '../../../testkit/ports';

const SECRET = 'faults-test-secret';
export const SIP_DOMAIN = 'sip.test';

export interface FaultPlatform {
  sipPort: number;
  apiUrl: string;
  app: MediaApp;
  api: AppContext;
  config: Readonly<Config>;
  close(): Promise<void>;
}

export async function startFaultPlatform(opts: { db: Knex; databaseUrl: string; webhooks?: WebhookOptions & { group: string }; env?: Record<string, string> }): Promise<FaultPlatform> {
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!redisUrl) throw new Error('TEST_REDIS_URL is not set: run `source .data/env`');
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const { sipPort, drachtioPort, stack, drachtio } = await startSipServer(logger, SECRET);
  const rtpMin = portBlock('platformRtp', 200).min;
  const env = {
    DATABASE_URL: opts.databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `tflt${process.pid}_${randomBytes(4).toString('hex')}:`,
    DATA_DIR: path.join(os.tmpdir(), `faults-test-${process.pid}`),
    SIP_DOMAIN,
    JWT_SECRET: 'f'.repeat(40),
    DRACHTIO_HOST: '127.0.0.1',
    DRACHTIO_PORT: String(drachtioPort),
    DRACHTIO_SECRET: SECRET,
    MEDIA_APP_NODE_ID: `flt-${process.pid}-${randomBytes(3).toString('hex')}`,
    RTP_PORT_MIN: String(rtpMin),
    RTP_PORT_MAX: String(rtpMin + 199),
    MEDIA_WORKERS: '1',
    RATE_LIMIT_SCALE: '0',
    LOG_LEVEL: 'silent',
    ...opts.env,
  } as NodeJS.ProcessEnv;
  const config = loadConfig(env, { persistSecret: false });
  const app = await startMediaApp({ config, app: loadMediaAppConfig(env), logger, db: opts.db, connectTimeoutMs: 10_000 });
  const redis: Redis = createRedis(config.redisUrl);
  const api = createContext({ config, db: opts.db, redis, logger });
  const server = http.createServer(createApp(api, { cacheTtlMs: 0 }).app);
  const apiPort = await freePort();
  await new Promise<void>((r) => server.listen(apiPort, '127.0.0.1', r));
  let webhooks: WebhookService | null = null;
  if (opts.webhooks) webhooks = await startWebhooks(api, opts.webhooks);
  return {
    sipPort,
    apiUrl: `http://127.0.0.1:${apiPort}`,
    app,
    api,
    config,
    async close() {
      await webhooks?.close().catch(() => undefined);
      await new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      });
      await app.stop();
      await drachtio.close();
      await stack.stop();
      redis.disconnect();
    },
  };
}
