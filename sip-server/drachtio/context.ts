/** State shared by the parts of the drachtio layer (UAS side, UAC side, proxy). */
import type { SipMessage } from '../message';
import type { AppConnection } from './app-connection';
import type { DialogTable } from './dialogs';
import type { MsgMeta } from './protocol';
import type { DrachtioServer } from './server';
import type { Endpoint, SipPort } from './sip-port';

export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export interface EngineOptions {
  /** User-Agent added to requests (and responses) that carry none; undefined = add nothing */
  userAgent?: string;
  /** OPTIONS carrying exactly this User-Agent are answered 200 by the server itself (load-balancer pings) */
  optionsAutoRespondUserAgent?: string;
  /** ms an application has to answer a new request before we give up on it (drachtio: 64 s) */
  appResponseTimeoutMs?: number;
  /**
   * Keep the dialogs of an application that went away, as drachtio-server does (in-dialog requests
   * then get 481). Default false: its calls are hung up (BYE, CANCEL), since nobody runs their media.
   */
  keepOrphanedDialogs?: boolean;
  /** ms a proxied dialog is remembered with no in-dialog request passing (SIP_PROXY_DIALOG_IDLE_MS; default 12 h) */
  proxyDialogIdleMs?: number;
  logger?: Logger;
}

export interface EngineContext {
  readonly port: SipPort;
  readonly server: DrachtioServer;
  readonly dialogs: DialogTable;
  readonly opts: EngineOptions;
  readonly log: Logger;
  /** send a `cdr:*` record to one application routed for it */
  cdr(type: 'attempt' | 'start' | 'stop', source: 'network' | 'application', extra: string | undefined, msg: SipMessage): void;
}

/** The message text and the meta line fields for a message we received. */
export function receivedMeta(msg: SipMessage, from: Endpoint): { raw: string; meta: MsgMeta } {
  const raw = msg.toString();
  return {
    raw,
    meta: { source: 'network', bytes: Buffer.byteLength(raw), protocol: from.transport, address: from.address, port: from.port },
  };
}

/** The message text and meta fields for a message we sent (`address`/`port`: the endpoint named). */
export function sentMeta(msg: SipMessage, at: Endpoint): { raw: string; meta: MsgMeta } {
  const raw = msg.toString();
  return {
    raw,
    meta: { source: 'application', bytes: Buffer.byteLength(raw), protocol: at.transport, address: at.address, port: at.port },
  };
}

export function live(conn: AppConnection | undefined): AppConnection | undefined {
  return conn && !conn.closed ? conn : undefined;
}
