/**
 * sip-server process entry: SIP stack (sip-config) + drachtio protocol server.
 *   npx tsx sip-server/main.ts
 * Environment: the SIP_* variables of sip-config (see sip-config/index.ts ENV_VARS, including the
 * drachtio host/port/secret), DRACHTIO_OUTBOUND=host:port[,host:port] (dial srf.listen() apps when
 * no connected application routes a method), DRACHTIO_USER_AGENT (added to messages without one),
 * DRACHTIO_USER_AGENT_OPTIONS_AUTO_RESPOND (OPTIONS with this User-Agent get 200 from the server), LOG_LEVEL.
 */
import pino from 'pino';
import { loadSipConfig, SipConfigError } from '../sip-config';
import { SipStack } from './stack';
import { parseOutboundTargets, startDrachtio } from './drachtio';
import { startCapture, type RunningCapture } from './capture';
import { sipMetricsListen, startSipMetricsListener, type SipMetricsListener } from './metrics-listener';
import { startTracing, TracingConfigError, type Tracing } from '../core/tracing';

async function main(): Promise<void> {
  const log = pino({ level: process.env.LOG_LEVEL ?? 'info', base: { service: 'sip-server' } });
  let config;
  let capture: RunningCapture | null;
  let metricsAt: { host: string; port: number } | null;
  let tracing: Tracing | null;
  try {
    config = loadSipConfig();
    metricsAt = sipMetricsListen();
    capture = startCapture(process.env, log.child({ component: 'sip-capture' }));
    // an incoming INVITE's transaction as a span (drachtio/trace.ts), off unless OTEL_* say so
    tracing = startTracing('sip-server');
  } catch (err) {
    if (err instanceof SipConfigError || err instanceof TracingConfigError || (err instanceof Error && /^SIP_(CAPTURE|METRICS_LISTEN)/.test(err.message))) {
      log.fatal((err as Error).message);
      process.exit(2);
    }
    throw err;
  }
  const stack = new SipStack(config, { logger: log.child({ component: 'sip-stack' }), capture: capture?.capture });
  stack.on('error', (err) => log.error({ err: err.message }, 'SIP transport error'));
  await stack.start();
  const drachtio = await startDrachtio(stack, {
    host: config.drachtio.host,
    port: config.drachtio.port,
    secret: config.drachtio.secret,
    outboundTargets: parseOutboundTargets(process.env.DRACHTIO_OUTBOUND),
    userAgent: process.env.DRACHTIO_USER_AGENT || undefined,
    optionsAutoRespondUserAgent: process.env.DRACHTIO_USER_AGENT_OPTIONS_AUTO_RESPOND || undefined,
    logger: log.child({ component: 'drachtio' }),
  });
  // a busy metrics port is reported, not fatal (SIP matters more than its counters)
  let metrics: SipMetricsListener | null = null;
  if (metricsAt) {
    metrics = await startSipMetricsListener(metricsAt, { defaultMetrics: true }).catch((err: unknown) => {
      log.error({ err: (err as Error).message }, `SIP_METRICS_LISTEN ${metricsAt!.host}:${metricsAt!.port}: cannot listen; no sip-server metrics`);
      return null;
    });
  }
  log.info(
    { sip: stack.listening, drachtio: `${config.drachtio.host}:${drachtio.port}`, metrics: metrics ? `${metricsAt!.host}:${metrics.port}` : 'off', otlp: tracing?.endpoint ?? 'off' },
    'sip-server ready',
  );
  // one line on stdout that scripts and benchmarks wait for
  if (process.env.SIP_SERVER_READY_LINE) {
    process.stdout.write(`READY ${JSON.stringify({ sip: stack.listening, drachtio: drachtio.port })}\n`);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    await metrics?.close();
    await drachtio.close().catch(() => undefined);
    await stack.stop().catch(() => undefined);
    await capture?.close();
    await tracing?.shutdown().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // benchmark hook: report CPU used so far (process.cpuUsage of this process)
  process.on('SIGUSR2', () => {
    const u = process.cpuUsage();
    const m = process.memoryUsage();
    const memory = { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
    process.stdout.write(`CPU ${JSON.stringify({ user: u.user, system: u.system, memory, stats: drachtio.engine.stats(), capture: capture?.capture.stats })}\n`);
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
