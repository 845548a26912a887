/**
 * The chaos bench's platform: its own Postgres (initdb, kill -9 of the postmaster allowed) and its own
 * Redis (appendonly, as scripts/setup.sh starts the embedded one), the three platform processes as
 * supervised children (testkit/reliability/processes.ts), and the account the calls use: a trunk by
 * address, a number whose flow answers and talks for minutes ("hold"), one whose flow connects the
 * caller to a carrier on loopback ("bridge": an outgoing PSTN leg, billed), one that answers and hangs
 * up ("probe"). Postgres and Redis are started again 2 s after they die, like the processes.
 */
import { sipProvider } from '../../../testkit/providers';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb, migrate, type Db } from '../../../core/db/knex';
import { parseActions } from '../../../core/flow';
import { repos } from '../../../core/repos';
import { flowsRepo } from '../../../core/repos/flows';
import { numbersRepo } from '../../../core/repos/numbers';
import { trunksRepo } from '../../../core/repos/trunks';
import { routesRepo } from '../../../core/repos/routes';
import { addBalance, ensureBillingAccount } from '../../../core/billing/ledger';
import { freePort } from '../../../testkit/ports';
import { startOwnPostgres, type OwnPostgres } from '../../../testkit/reliability/postgres';
import { startRedis, type RedisServer } from '../../../testkit/reliability/redis-fault';
import { startPlatformProcesses, type PlatformProcesses } from '../../../testkit/reliability/supervised';

export const HOLD_NUMBER = '+899100000001';
export const PROBE_NUMBER = '+899100000002';
/** its flow connects the caller to +12125550101 through the gateway: the outgoing leg is billed */
export const BRIDGE_NUMBER = '+899100000003';
const SOURCE_NUMBER = '+14155550100';
const RESTART_MS = 2000;

export interface Stand {
  db: Db;
  pg: OwnPostgres;
  redis: () => RedisServer;
  pp: PlatformProcesses;
  customerId: string;
  accesskey: string;
  /** the loopback port of the carrier (scripts/bench/chaos/gateway.ts) the bridged calls go to */
  gatewayPort: number;
  /** kill -9 of Postgres or Redis; each is started again RESTART_MS later (retried until it runs) */
  killPostgres(): Promise<void>;
  killRedis(): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `start` again until it succeeds (a Postgres whose orphaned backends still hold its memory refuses at first), 60 s at most. */
async function restartLoop(start: () => Promise<void>): Promise<void> {
  const end = Date.now() + 60_000;
  await sleep(RESTART_MS);
  for (;;) {
    try {
      await start();
      return;
    } catch (e) {
      if (Date.now() > end) throw e;
      await sleep(500);
    }
  }
}

async function account(db: Db, gatewayPort: number): Promise<{ customerId: string; accesskey: string }> {
  const r = repos(db);
  const customer = await r.customers.create({ email: `chaos${process.pid}@example.test`, email_verified: true, status: 'active', name: 'chaos' });
  const { token } = await r.accesskeys.create({ customer_id: customer.id, name: 'chaos' });
  await trunksRepo(db).create(customer.id, 'chaos', { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  // one text for every call: synthesised once (the TTS cache), then minutes of audio per call
  const text = 'This is a long announcement that keeps the line busy while the platform is hurt. '.repeat(60);
  const hold = await flowsRepo(db).create({ customer_id: customer.id, actions: parseActions([{ type: 'answer' }, { type: 'talk', option: { text, language: 'en-US' } }]) } as never);
  const probe = await flowsRepo(db).create({ customer_id: customer.id, actions: parseActions([{ type: 'answer' }, { type: 'hangup' }]) } as never);
  await numbersRepo(db).create({ customer_id: customer.id, number: HOLD_NUMBER, type: 'virtual', call_flow_id: hold.id });
  await numbersRepo(db).create({ customer_id: customer.id, number: PROBE_NUMBER, type: 'virtual', call_flow_id: probe.id });
  // bridged calls: a PSTN leg through a provider on loopback, allowed to the US, paid from a balance
  await r.outboundConfigs.create({ customer_id: customer.id, destination_whitelist: ['us'] });
  await numbersRepo(db).create({ customer_id: customer.id, number: SOURCE_NUMBER, type: 'normal' });
  await addBalance(db, (await ensureBillingAccount(db, customer.id)).id, 1_000_000_000, `chaos:${customer.id}`);
  const provider = await sipProvider(db, `127.0.0.1:${gatewayPort}`, 'chaos gateway');
  await routesRepo(db).create({ customer_id: customer.id, name: 'all', detail: '', provider_id: provider.id, priority: 1, target: 'all' });
  const tel = (target: string) => ({ type: 'tel', target });
  const bridge = await flowsRepo(db).create({
    customer_id: customer.id,
    actions: parseActions([{ type: 'connect', option: { source: tel(SOURCE_NUMBER), destinations: [tel('+12125550101')] } }]),
  } as never);
  await numbersRepo(db).create({ customer_id: customer.id, number: BRIDGE_NUMBER, type: 'virtual', call_flow_id: bridge.id });
  return { customerId: customer.id, accesskey: token };
}

export async function startStand(): Promise<Stand> {
  const pg = await startOwnPostgres('platform');
  const redisDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaos-redis-'));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaos-data-'));
  let redis: RedisServer | null = null;
  let db: Db | null = null;
  let pp: PlatformProcesses | null = null;
  const cleanup = async () => {
    await pp?.stop();
    await db?.destroy();
    await redis?.stop('SIGKILL');
    pg.destroy();
    fs.rmSync(redisDir, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    redis = await startRedis(redisDir);
    db = createDb(pg.url);
    await migrate(db);
    const gatewayPort = await freePort();
    const acct = await account(db, gatewayPort);
    pp = await startPlatformProcesses({
      databaseUrl: pg.url,
      redisUrl: redis.url,
      dataDir,
      preload: [path.resolve(__dirname, '../../../testkit/reliability/worker-kill.cjs')],
      env: { CHAOS_WORKER_KILL: '1', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' },
      restartMs: RESTART_MS,
      // not the soak's range: the two may run at once in one shard
      rtpRange: 'nodeRtp',
    });
    const port = redis.port;
    return {
      db,
      pg,
      redis: () => redis!,
      pp,
      ...acct,
      gatewayPort,
      killPostgres: async () => {
        await pg.kill();
        void restartLoop(() => pg.start());
      },
      killRedis: async () => {
        await redis!.stop('SIGKILL');
        void restartLoop(async () => {
          redis = await startRedis(redisDir, { port });
        });
      },
      close: cleanup,
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}
