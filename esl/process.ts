/**
 * The switch as one process owns it: the media engine, the event socket (inbound, and the outbound
 * connections of its channels) and the SIP face, a drachtio-srf application on the sip-server that
 * listens on the drachtio_mrf profile's SIP address. `startSwitch` brings them up in that order;
 * `stop` hangs up every channel and closes them in reverse, and owns nothing afterwards (no timer, no
 * socket, no worker), so the process ends by itself.
 */
import type DrachtioSrf from 'drachtio-srf';
import { EgressPolicy, type EgressSettings } from '../core/net';
import { MediaServer } from '../media-engine';
import type { EslConfig } from './config';
import type { EslProcessConfig } from './main-config';
import { EslServer } from './server';
import { SipFace } from './sip-face';

type Srf = DrachtioSrf;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- typed as the Srf above: an import would carry the declarations' constructor type
const SrfCtor = require('drachtio-srf') as new () => Srf;

/** What the process logs (core/logger's pino in main.ts). */
export interface SwitchLog {
  info(o: object, msg: string): void;
  warn(o: object, msg: string): void;
  error(o: object, msg: string): void;
}

export interface RunningSwitch {
  /** the inbound event socket's address */
  readonly listening: { address: string; port: number };
  /** resolves when the SIP face is first connected to its sip-server */
  readonly faceConnected: Promise<void>;
  readonly esl: EslServer;
  stop(): Promise<void>;
}

/** drachtio-srf's connection internals `stopSrf` needs (not in its typings). */
interface SrfWire {
  _app?: { client?: { wp?: { closing?: boolean; socket?: { connecting: boolean; destroy(): void }; reconnectVars?: { retryTimer?: NodeJS.Timeout | null } } } };
}

/**
 * Disconnects for good, also while drachtio-srf waits to reconnect (the sip-server went first): its
 * disconnect() would then throw before marking the connection closing, and its retry timer run on.
 */
function stopSrf(srf: Srf): void {
  const wp = (srf as unknown as SrfWire)._app?.client?.wp;
  if (wp) {
    wp.closing = true;
    if (wp.reconnectVars?.retryTimer) clearTimeout(wp.reconnectVars.retryTimer);
    if (wp.reconnectVars) wp.reconnectVars.retryTimer = null;
  }
  try {
    srf.disconnect();
  } catch {
    /* the connection was already gone */
  }
  if (wp?.socket?.connecting) wp.socket.destroy();
}

/** The face's drachtio connection: retried until the sip-server is up (it may start later) and across its restarts. */
function connectFace(srf: Srf, proc: EslProcessConfig, log: SwitchLog): Promise<void> {
  return new Promise((resolve) => {
    let first = true;
    srf.on('error', (err: Error) => {
      if (first) log.warn({ err: err.message, drachtio: `${proc.drachtio.host}:${proc.drachtio.port}` }, 'SIP face: sip-server not reachable yet, retrying');
    });
    srf.on('connect', (err: Error | null, hostport?: string) => {
      if (err) return log.error({ err: err.message }, 'SIP face: the sip-server refused the connection');
      log.info({ sip: hostport }, first ? 'SIP face connected' : 'SIP face connected again');
      first = false;
      resolve();
    });
    (srf as unknown as { connect(o: object): void }).connect({ host: proc.drachtio.host, port: proc.drachtio.port, secret: proc.drachtio.secret, reconnect: { retryMaxDelay: 1000 } });
  });
}

/** `egress`: what the switch may fetch and connect to (play URLs, audio forks); default: the engine's (public addresses) and the event socket's (EGRESS_*) own. */
export async function startSwitch(cfg: EslConfig, proc: EslProcessConfig, log: SwitchLog, egress?: EgressSettings): Promise<RunningSwitch> {
  const engine = await MediaServer.start({
    ...(egress ? { egress } : {}),
    bindAddress: proc.rtp.bindHost,
    advertisedAddress: proc.rtp.advertisedHost,
    rtpPorts: { min: proc.rtp.min, max: proc.rtp.max },
    workers: proc.rtp.workers,
  });
  const esl = new EslServer({
    password: cfg.password,
    profile: { name: 'drachtio_mrf', address: cfg.sipAddress },
    heartbeatMs: cfg.heartbeatMs,
    authTimeoutMs: cfg.authTimeoutMs,
    authLimit: cfg.authLimit,
    maxSessions: cfg.maxSessions,
    forkConnectTimeoutMs: cfg.forkConnectTimeoutMs,
    conferenceFiles: cfg.conferenceFiles,
    ...(egress ? { egress: new EgressPolicy(egress) } : {}),
  });
  esl.on('rejected', (address: string, reason: string) => log.warn({ address, reason }, 'event socket connection refused'));
  esl.on('failed', (err: Error) => log.error({ err: err.message }, 'event socket command failed'));
  let listening: { address: string; port: number };
  try {
    listening = await esl.listen(cfg.listen.port, cfg.listen.host);
  } catch (e) {
    await esl.close();
    await engine.destroy();
    throw e;
  }
  const srf = new SrfCtor();
  const faceConnected = connectFace(srf, proc, log);
  new SipFace(srf, engine, esl).start();
  let stopped: Promise<void> | null = null;
  const stop = () =>
    (stopped ??= (async () => {
      // FreeSWITCH's shutdown: each channel hung up (a BYE each), then every connection told, then the rest
      for (const call of [...esl.channels.values()]) call.hangup('SYSTEM_SHUTDOWN');
      stopSrf(srf);
      await esl.close();
      await engine.destroy();
    })());
  return { listening, faceConnected, esl, stop };
}
