// A sip-server in process (a real SipStack with its drachtio server on loopback) and drachtio-srf
// applications connected to it: the drachtio tests (test/sip-server/drachtio) and the switch rig
// (testkit/esl/switch-rig.ts, fsmrf's Srf and the switch's SIP face) both start theirs here.
import pino from 'pino';
import DrachtioSrf from 'drachtio-srf';
import { makeSipConfig, type SipConfigInput } from '../../sip-config';
import { SipStack } from '../../sip-server/stack';
import { startDrachtio, type RunningDrachtio, type OutboundTarget } from '../../sip-server/drachtio';
import { freePort } from '../ports';

/** A drachtio-srf application (the drachtio suites drive it untyped, through test/sip-server/drachtio/harness.ts). */
export type SrfApp = DrachtioSrf;

export const SECRET = 'cymru';

export interface Server {
  stack: SipStack;
  drachtio: RunningDrachtio;
  sipPort: number;
  drachtioPort: number;
  close(): Promise<void>;
}

export async function startServer(opts: { outboundTargets?: OutboundTarget[]; config?: SipConfigInput; autoRespondUa?: string; keepOrphanedDialogs?: boolean } = {}): Promise<Server> {
  const sipPort = await freePort();
  const drachtioPort = await freePort();
  const config = makeSipConfig({
    listen: { host: '127.0.0.1', port: sipPort, transports: ['udp', 'tcp'] },
    timers: { t1: 500, t2: 4000, t4: 5000 },
    drachtio: { host: '127.0.0.1', port: drachtioPort, secret: SECRET },
    ...opts.config,
  });
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const stack = new SipStack(config, { logger });
  await stack.start();
  const drachtio = await startDrachtio(stack, {
    host: '127.0.0.1',
    port: drachtioPort,
    secret: SECRET,
    outboundTargets: opts.outboundTargets,
    logger,
    optionsAutoRespondUserAgent: opts.autoRespondUa,
    keepOrphanedDialogs: opts.keepOrphanedDialogs,
  });
  return {
    stack,
    drachtio,
    sipPort,
    drachtioPort,
    async close() {
      await drachtio.close();
      await stack.stop();
    },
  };
}

/** An srf application connected (inbound mode) and authenticated. */
export function connectSrf(port: number, tags?: string[]): Promise<SrfApp> {
  const srf = tags ? new DrachtioSrf(tags) : new DrachtioSrf();
  // drachtio-srf takes `reconnect` too, beyond its declared options
  const config: DrachtioSrf.SrfConfig & { reconnect: { maxAttempts: number } } = { host: '127.0.0.1', port, secret: SECRET, reconnect: { maxAttempts: 1 } };
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('srf did not connect')), 5000);
    void srf.connect(config);
    srf.on('connect', (err: Error | null) => {
      clearTimeout(t);
      if (err) reject(err);
      else resolve(srf);
    });
    srf.on('error', () => undefined);
  });
}

export function disconnectSrf(srf: SrfApp): void {
  try {
    srf.disconnect();
  } catch {
    /* already gone */
  }
}
