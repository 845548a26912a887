/**
 * The switch as a process (`npx tsx esl/main.ts`): the media engine, the SIP face on the sip-server
 * of ESL_DRACHTIO_* and the inbound event socket (esl/process.ts), when ESL_LISTEN is set; it says so and
 * exits when it is not. Settings: esl/config.ts and esl/main-config.ts (.env.example, "event socket");
 * bad ones stop it with one line each (exit 2). SIGINT/SIGTERM hang up every channel and close
 * everything; the process then ends on its own (exit 0), or after ESL_STOP_TIMEOUT_MS says what it
 * waited for and exits 1. ESL_READY_LINE=1 prints `READY {...}` on stdout once the face is connected.
 */
import { createLogger } from '../core/logger';
import { loadEslConfig } from './config';
import { loadEslProcessConfig } from './main-config';
import { startSwitch } from './process';

async function main(): Promise<void> {
  const log = createLogger(process.env.LOG_LEVEL ?? 'info', 'esl');
  let cfg;
  let proc;
  try {
    cfg = loadEslConfig();
    proc = loadEslProcessConfig();
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
  if (!cfg) {
    log.info('ESL_LISTEN is not set: the event socket is off');
    return;
  }
  const sw = await startSwitch(cfg, proc, log);
  log.info({ address: sw.listening.address, port: sw.listening.port, sipProfile: cfg.sipAddress }, 'event socket listening');
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      const open = (process as unknown as { getActiveResourcesInfo(): string[] }).getActiveResourcesInfo().filter((r) => r !== 'Timeout');
      log.error({ open }, `not closed within ${proc.stopTimeoutMs} ms`);
      process.exit(1);
    }, proc.stopTimeoutMs);
    force.unref();
    sw.stop().then(
      () => log.info({}, 'stopped'),
      (err: unknown) => {
        log.error({ err: (err as Error).message }, 'shutdown failed');
        process.exitCode = 1;
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  await sw.faceConnected;
  if (!stopping && process.env.ESL_READY_LINE) process.stdout.write(`READY ${JSON.stringify({ esl: sw.listening.port, sip: cfg.sipAddress })}\n`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
