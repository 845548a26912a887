/**
 * One media-app node: the drachtio-srf connection, the media server, the registrar, inbound and
 * outbound calls, the BullMQ workers and the node heartbeat. `startMediaApp` is what main.ts and the
 * tests call; `stop()` hangs up live calls, closes workers and disconnects.
 */
import { useKeySecret } from '../core/secrets/keys';
import { WaitingError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../core/config';
import { createDb, type Knex } from '../core/db/knex';
import { EventPublisher, eventStreamKey } from '../core/events/bus';
import { NodeSweeper } from '../core/calls/node-sweep';
import { MEDIA_NODES_KEY } from '../core/calls/node-keys';
import { ORIGINATE_QUEUE, nodeAliveKey, nodeQueueName } from '../core/commands/contracts';
import { EgressPolicy } from '../core/net';
import { engineCacheDir } from '../core/data-dirs';
import { privateDir } from '../core/files/private-dir';
import { configureTtsCache, MediaServer } from '../media-engine';
import { promptCachePath, promptsDir, type MediaAppConfig } from './kit/config';
import { describeMediaServer } from './kit/media-server';
import type { MediaPort } from './media-server/port';
import { FsmrfBackend } from './media-server/fsmrf/backend';
import { SharedPrompts } from './media-server/fsmrf/shared-prompts';
import { connectSrf, disconnectSrf, type Srf } from './kit/srf';
import { watchSipServer } from './call/sip-gone';
import { Registrar } from './registrar';
import { CallRegistry } from './call/registry';
import { CallFactory } from './call/factory';
import { InboundRouter } from './inbound/router';
import { CommandHandler } from './commands';
import { SUBSYSTEMS } from './subsystems';
import { requestChecks } from './request-checks';
import { sessionIntervalCheck } from './kit/sip-session-timer';
import { startOutboundRegistrations } from './outreg';
import { MediaRelay } from './rtpengine';
import { removeRelayHealth, writeRelayHealth } from '../core/calls/relay-health';
import { trustedEdge } from './kit/edge';

export interface MediaAppDeps {
  config: Readonly<Config>;
  app: MediaAppConfig;
  logger: Logger;
  /** Shared knex (tests); otherwise one is created from config.databaseUrl and closed on stop. */
  db?: Knex;
  /** Give up connecting to sip-server after this long (default: retry forever). */
  connectTimeoutMs?: number;
}

export interface MediaApp {
  nodeId: string;
  srf: Srf;
  /** the media backend the calls use: the embedded engine, or the fsmrf backend (MEDIA_SERVER) */
  media: MediaPort;
  /** the embedded engine, when it is the backend (null on the fsmrf backend) */
  engine: MediaServer | null;
  registrar: Registrar;
  calls: CallRegistry;
  factory: CallFactory;
  /** True once drain() was called: OPTIONS and new INVITEs are answered 503, no originate is taken. */
  readonly draining: boolean;
  /**
   * Takes the node out of service without dropping calls: OPTIONS answered 503 (the edge's dispatcher
   * moves new calls elsewhere), new out-of-dialog INVITEs refused with 503 (the edge tries the next
   * node), the shared originate worker paused (other nodes take originates); resolves once no call
   * is left or after `timeoutMs`, whichever first. stop() afterwards ends what is left.
   */
  drain(timeoutMs: number): Promise<{ left: number }>;
  stop(): Promise<void>;
}

export async function startMediaApp(deps: MediaAppDeps): Promise<MediaApp> {
  const { config, app, logger } = deps;
  configureProcess(deps);
  const prefix = config.redisKeyPrefix;
  const ownDb = !deps.db;
  const db = deps.db ?? createDb(config.databaseUrl, { poolMax: config.databasePoolMax });
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2 });
  const workerRedis = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  // Redis restarting: ioredis reconnects on its own; say so once per outage instead of an unhandled error per retry
  let redisDown = false;
  for (const c of [redis, workerRedis]) {
    c.on('error', (err: Error) => {
      if (!redisDown) logger.warn({ err: err.message }, 'redis unreachable, reconnecting');
      redisDown = true;
    });
    c.on('ready', () => (redisDown = false));
  }
  const closers: Closers = [];
  try {
    const engine = app.mediaServer.kind === 'embedded' ? await startMedia(deps, closers) : null;
    // What a previous run under this node id left when it died (restarted before the sweeper saw
    // its heartbeat expire): finalise those calls and fail their commands before taking new ones.
    const events = new EventPublisher(redis, eventStreamKey(prefix));
    await new NodeSweeper({ db, redis, keyPrefix: prefix, events, logger, dataDir: config.dataDir }).sweepNode(app.nodeId);
    const relay = await startHeartbeat(deps, redis, closers);
    const srf = await connectSrf({
      ...app.drachtio,
      timeoutMs: deps.connectTimeoutMs,
      onAttemptFailed: (err) => logger.debug({ err: err.message }, 'sip-server not reachable yet'),
    });
    closers.push(async () => disconnectSrf(srf));
    logger.info({ drachtio: `${app.drachtio.host}:${app.drachtio.port}`, node: app.nodeId }, 'connected to sip-server');
    const media: MediaPort = engine ?? (await connectSwitch(deps, srf, closers));
    srf.use(trustedEdge(app.trustedProxies)); // the real source of requests relayed by the edge
    srf.use(requestChecks); // before every handler below
    srf.use(sessionIntervalCheck(() => app.sessionTimer)); // RFC 4028: a Session-Expires below our Min-SE gets 422
    const state = { draining: false, stopped: false };

    const registrar = await createRegistrar(deps, db, redis);
    srf.register(registrar.handle);

    const calls = new CallRegistry(redis, prefix, app.nodeId);
    watchSipServer(srf, calls, logger); // its drop ends the calls; its return sends their far ends a BYE
    const factory = new CallFactory({ srf, media, db, redis, events, calls, config, app, logger, registrar, egress: new EgressPolicy(config.egress), relay });
    const inbound = new InboundRouter(factory);
    takeNewRequests(srf, state, media, inbound);

    // registering to carriers once INVITEs can be taken; unregistered (expiry 0) at stop, before calls end
    const outreg = startOutboundRegistrations({ srf, db, redis, events, config, app, logger: logger.child({ component: 'outreg' }) });
    closers.push(() => outreg.stop());

    const originates = await startCommands(deps, factory, workerRedis, state, closers);

    return {
      nodeId: app.nodeId,
      srf,
      media,
      engine,
      registrar,
      calls,
      factory,
      get draining() {
        return state.draining;
      },
      drain: (timeoutMs) => drainNode(deps, calls, originates, state, timeoutMs),
      async stop() {
        if (state.stopped) return;
        state.stopped = true;
        await closeAll(closers, logger);
        await Promise.allSettled([redis.quit(), workerRedis.quit(), ownDb ? db.destroy() : Promise.resolve()]);
      },
    };
  } catch (err) {
    await closeAll(closers, logger);
    await Promise.allSettled([redis.quit(), workerRedis.quit(), ownDb ? db.destroy() : Promise.resolve()]);
    throw err;
  }
}

/** The reason phrase of the 503 a new call and OPTIONS get while the fsmrf backend's switch is lost. */
export const MEDIA_DOWN_REASON = 'Media Server Unavailable';

/**
 * New INVITEs to the inbound router and OPTIONS answered 200, unless the node is draining or the fsmrf
 * backend's switch is lost (reconnecting): then both get 503, as the edge's dispatcher expects.
 */
function takeNewRequests(srf: Srf, state: NodeState, media: MediaPort, inbound: InboundRouter): void {
  const mediaDown = () => media instanceof FsmrfBackend && !media.up;
  srf.invite((req, res) => {
    if (state.draining) return res.send(503, { headers: { 'Retry-After': '30' } });
    if (mediaDown()) return res.send(503, MEDIA_DOWN_REASON, { headers: { 'Retry-After': '30' } });
    inbound.handle(req, res);
  });
  srf.options((_req, res) => (mediaDown() ? res.send(503, MEDIA_DOWN_REASON) : res.send(state.draining ? 503 : 200)));
}

/** What stop() runs, last pushed first. */
type Closers = (() => Promise<unknown>)[];
/** The node's drain flag and whether stop() was called. */
type NodeState = { draining: boolean; stopped: boolean };

/** What this thread's modules take from the config before anything starts. */
function configureProcess({ config, app }: MediaAppDeps): void {
  // the key that opens the AI vendor keys sealed at rest (core/secrets/keys.ts)
  useKeySecret(config.jwtSecret);
  // the bound of the speech caches made in this thread (media-app's voices, the fsmrf backend's prompts)
  configureTtsCache(app.ttsCache);
}

/** The media server, its workers' scheduling logged. */
async function startMedia({ config, app, logger }: MediaAppDeps, closers: Closers): Promise<MediaServer> {
  const media = await MediaServer.start({
    bindAddress: app.rtp.bindHost,
    advertisedAddress: app.rtp.advertisedHost,
    rtpPorts: { min: app.rtp.min, max: app.rtp.max },
    workers: app.rtp.workers,
    workerNice: app.rtp.workerNice,
    workerRealtime: app.rtp.workerRealtime,
    egress: config.egress,
    // its cache of prompts, fetched URLs and speech: media-app's alone (0700, ours: refused at start otherwise)
    cacheDir: privateDir(engineCacheDir(config.dataDir), 'DATA_DIR'),
    ttsCache: app.ttsCache,
    promptCache: { maxCacheBytes: app.mediaServerPromptCacheMaxBytes },
  });
  if (media.rtpIo === 'dgram') logger.warn('media workers use node:dgram for RTP: the native sockets are not built (scripts/build-native.sh), each packet costs more');
  if ((app.rtp.workerRealtime || (app.rtp.workerNice ?? 0) < 0) && !globalThis.process.execArgv.includes('--single-threaded-gc'))
    logger.warn(
      'media workers have a raised priority but node runs without --single-threaded-gc: their garbage collection waits for helper threads at ordinary priority (scripts/start.ts starts media-app with it)',
    );
  if (app.rtp.workerRealtime) {
    const s = media.schedules;
    if (s.length && s.every((w) => w.policy === 'rr')) logger.info({ workers: s, ...app.rtp.workerRealtime }, 'media workers on real-time scheduling (SCHED_RR, watched)');
    else logger.warn({ workers: s }, 'media workers: real-time scheduling refused, running at their nice value');
  }
  media.on('workerSchedule', (c) => {
    const line = { worker: c.index, tid: c.tid, policy: c.policy, reason: c.reason, cpuShare: c.cpuShare, err: c.message };
    if (c.reason === 'start' || c.reason === 'cooled') logger.info(line, 'media worker on real-time scheduling');
    else logger.warn(line, c.reason === 'overrun' ? 'media worker over its CPU limit: back to ordinary scheduling' : 'media worker: real-time scheduling refused');
  });
  closers.push(() => media.destroy());
  media.on('error', (err: Error) => logger.error({ err: err.message }, 'media worker died'));
  return media;
}

/**
 * The fsmrf backend (MEDIA_SERVER=freeswitch://…): drachtio-fsmrf on media-app's own Srf (so connected
 * once the Srf is, where the embedded engine starts before it), to the switch's event socket; its
 * endpoints are the calls' legs. Closed after the calls are hung up.
 */
async function connectSwitch({ config, app, logger }: MediaAppDeps, srf: Srf, closers: Closers): Promise<MediaPort> {
  const setting = app.mediaServer;
  if (setting.kind !== 'freeswitch') throw new Error('connectSwitch: MEDIA_SERVER names no switch');
  // a prompt URL is fetched by media-app through its egress policy into the directory the switch reads
  const egress = new EgressPolicy(config.egress);
  const log = logger.child({ component: 'media-server' });
  // the media timeout rides on each leg's INVITE: a real FreeSWITCH reads it only when the leg's RTP starts
  const opts = { connectTimeoutMs: app.mediaServerConnectTimeoutMs, taps: app.mediaServerTaps, reconnect: app.mediaServerReconnect, log, mediaTimeoutMs: app.mediaInactivityMs };
  // media-app's own cache (0700, ours: refused at start otherwise), bounded
  const cache = { cacheDir: promptCachePath(app, config.dataDir), maxCacheBytes: app.mediaServerPromptCacheMaxBytes };
  const prompts = new SharedPrompts(promptsDir(app, config.dataDir), egress, cache);
  // what a crashed media-app of this host left there (its prompts' directories) goes before the first call
  const stale = await prompts.sweepStale();
  if (stale.length) log.info({ dir: prompts.dir, removed: stale.length }, 'removed the prompt directories a crashed media-app left');
  const backend = (await FsmrfBackend.connect(srf, setting, opts)).promptsIn(prompts);
  closers.push(async () => backend.close());
  logger.info({ media_server: describeMediaServer(setting) }, 'media on the fsmrf backend');
  return backend;
}

/** rtpengine (RTPENGINE_NG) for the legs that need it, and the node heartbeat its health rides on (/readyz). */
async function startHeartbeat({ config, app, logger }: MediaAppDeps, redis: Redis, closers: Closers): Promise<MediaRelay> {
  const prefix = config.redisKeyPrefix;
  const relay = MediaRelay.create(app.rtpengineNg);
  closers.push(async () => relay.close());
  relay.onHealth((to, from) => (to === 'down' ? logger.warn({ ng: relay.ng, from }, 'rtpengine unreachable: SRTP / WebRTC legs fail') : logger.info({ ng: relay.ng, from }, `rtpengine ${to}`)));
  const relayHealth = () => writeRelayHealth(redis, prefix, app.nodeId, { status: relay.status, ng: relay.ng, until: Date.now() + app.heartbeatMs * 3 });
  relay.onHealth(() => void relayHealth().catch(() => undefined));
  const alive = () => Promise.all([redis.set(prefix + nodeAliveKey(app.nodeId), String(Date.now()), 'PX', app.heartbeatMs * 3), relayHealth()]);
  await alive();
  // known to the sweeper from the start: a node may host conferences or groupcalls before it owns a call
  await redis.sadd(prefix + MEDIA_NODES_KEY, app.nodeId);
  const beat = setInterval(() => void alive().catch(() => undefined), app.heartbeatMs);
  closers.push(async () => {
    clearInterval(beat);
    await redis.del(prefix + nodeAliveKey(app.nodeId)).catch(() => undefined);
    await removeRelayHealth(redis, prefix, app.nodeId).catch(() => undefined);
  });
  return relay;
}

function createRegistrar({ config, app, logger }: MediaAppDeps, db: Knex, redis: Redis): Promise<Registrar> {
  return Registrar.create({
    db,
    redis,
    keyPrefix: config.redisKeyPrefix,
    logger: logger.child({ component: 'registrar' }),
    algorithms: app.registrar.algorithms,
    minExpires: app.registrar.minExpires,
    maxExpires: app.registrar.maxExpires,
    lockout: {
      failures: app.registrar.lockoutFailures,
      windowSec: app.registrar.lockoutWindowSec,
      lockSec: app.registrar.lockoutSec,
      aorFailures: app.registrar.lockoutAorFailures,
      aorWindowSec: app.registrar.lockoutAorWindowSec,
    },
  });
}

/**
 * The subsystems and the command workers (the shared originate queue and this node's own); their closers
 * run last-first: stop taking commands, stop the subsystems, then hang up what is live. Returns the
 * originate worker, which a drain pauses.
 */
async function startCommands({ config, app, logger }: MediaAppDeps, factory: CallFactory, workerRedis: Redis, state: NodeState, closers: Closers): Promise<Worker> {
  const prefix = config.redisKeyPrefix;
  const commands = new CommandHandler(factory, logger.child({ component: 'commands' }));
  const running: { stop(): Promise<void> }[] = [];
  for (const sub of SUBSYSTEMS) {
    const started = await sub.start({
      deps: factory.deps,
      factory,
      services: factory.services,
      commands,
      nodeId: app.nodeId,
      logger: logger.child({ component: sub.name }),
    });
    running.push(started);
  }
  const process = (job: Job<unknown>) => commands.handle(job.data);
  const workerOpts = { connection: workerRedis, prefix: `${prefix}bull`, concurrency: 50 };
  // a shared command (originate, activeflow start) held by a node that dies is taken again by another
  // node within about 5 s (lock lapses, stalled check), once; claims keep a call from being dialled twice
  // a job fetched while the drain paused the worker (a fetch was already under way) goes back for another node
  const originate = async (job: Job<unknown>, token?: string) => {
    if (!state.draining || !token) return process(job);
    await job.moveToWait(token);
    throw new WaitingError();
  };
  const originates = new Worker(ORIGINATE_QUEUE, originate, { ...workerOpts, lockDuration: 5000, stalledInterval: 2000, maxStalledCount: 1 });
  const workers = [originates, new Worker(nodeQueueName(app.nodeId), process, workerOpts)];
  for (const w of workers) w.on('error', (err) => logger.warn({ err: err.message }, 'queue worker error'));
  closers.push(() => factory.deps.calls.hangupAll());
  // Subsystems stop once the workers are closed and before live calls are hung up, last started first.
  closers.push(async () => {
    for (const r of running.reverse()) await r.stop().catch((err: Error) => logger.warn({ err: err.message }, 'subsystem stop failed'));
  });
  closers.push(() => Promise.all(workers.map((w) => w.close())));
  return originates;
}

async function drainNode({ app, logger }: MediaAppDeps, calls: CallRegistry, originates: Worker, state: NodeState, timeoutMs: number): Promise<{ left: number }> {
  if (!state.draining) logger.info({ node: app.nodeId, calls: calls.size, timeout_ms: timeoutMs }, 'draining');
  state.draining = true;
  // the originates being dialled finish here; new ones wait in the shared queue for other nodes
  await originates.pause(true).catch((err: Error) => logger.warn({ err: err.message }, 'pausing originates failed'));
  const end = Date.now() + timeoutMs;
  while (calls.size > 0 && Date.now() < end && !state.stopped) await new Promise((r) => setTimeout(r, 200));
  logger.info({ node: app.nodeId, left: calls.size }, calls.size ? 'drain bound reached' : 'drained');
  return { left: calls.size };
}

/** Runs the closers last-registered first, each bounded, none stopping the others. */
async function closeAll(closers: (() => Promise<unknown>)[], logger: Logger): Promise<void> {
  for (const close of closers.reverse()) {
    try {
      await Promise.race([close(), new Promise((r) => setTimeout(r, 5000).unref())]);
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'shutdown step failed');
    }
  }
}
