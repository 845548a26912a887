/**
 * The drachtio-srf connection to sip-server. The types are drachtio-srf's own declarations
 * (drachtio-srf/lib/@types), augmented below only where they lack something we use or disagree with
 * the code they describe (drachtio-srf 5.x).
 */
import type DrachtioSrf from 'drachtio-srf';
import { redactDebugSecret } from './debug-redact';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- typed as the Srf above: an import would carry the declarations' constructor type
const SrfCtor = require('drachtio-srf') as new (tags?: string[]) => Srf;

export type SrfRequest = DrachtioSrf.SrfRequest;

/** A response; the declarations require options after a reason phrase, the code does not. */
export interface SrfResponse extends DrachtioSrf.SrfResponse {
  send(status: number, reason?: string | object, opts?: object): void;
}

/**
 * A dialog; the declarations lack `connected` and `id`, destroy() returns a promise without a callback, and
 * request() takes the new request's method, headers and body (not a received request).
 */
export interface SrfDialog extends Omit<DrachtioSrf.Dialog, 'request' | 'destroy'> {
  connected: boolean;
  /** The server's dialog id (unique per dialog). */
  readonly id: string;
  destroy(opts?: { headers: Record<string, string> }): Promise<void>;
  request(opts: { method: string; headers?: Record<string, string>; body?: string }): Promise<SrfResponse>;
}

/** The request handed to createUAC's cbRequest: it can be cancelled (CANCEL) until a final response. */
export interface SrfSentInvite {
  cancel(): void;
  /** A header of the INVITE as sent (Call-ID...). */
  get(name: string): string | undefined;
}

type Handler = (req: SrfRequest, res: SrfResponse) => void;

/** What a SUBSCRIBE dialog (srf.createUAS on a SUBSCRIBE) tells: its events are not in the declarations. */
export interface SubscriptionDialogEvents {
  /** An in-dialog SUBSCRIBE with Expires > 0 (a refresh): answer it. */
  refresh: Handler;
  /** An in-dialog SUBSCRIBE with Expires: 0, already answered 202 by drachtio-srf. */
  unsubscribe: () => void;
  /** The dialog is gone (our terminating NOTIFY was answered). */
  destroy: () => void;
}

export function onSubscriptionDialog(dialog: SrfDialog, h: SubscriptionDialogEvents): void {
  const emitter = dialog as unknown as NodeJS.EventEmitter;
  emitter.on('subscribe', h.refresh);
  emitter.on('unsubscribe', h.unsubscribe);
  emitter.on('destroy', h.destroy);
}

/**
 * Calls fn each time the connection to sip-server closes: drachtio-srf emits 'close' (a failed
 * reconnect attempt's too), never the 'disconnect' its declarations name.
 */
export function onSrfClosed(srf: Srf, fn: () => void): void {
  (srf as unknown as NodeJS.EventEmitter).on('close', fn);
}

/** Calls fn each time a connection to sip-server is up (authenticated): after a drop, the reconnection. */
export function onSrfConnected(srf: Srf, fn: () => void): void {
  (srf as unknown as NodeJS.EventEmitter).on('connect', (err: Error | null) => {
    if (!err) fn();
  });
}

/**
 * The Srf instance: the declarations lack the verb methods other than invite (register, options,
 * message, subscribe) and removeDialog, and createUAS/createUAC resolve with our SrfDialog; createUAC's cbRequest gets (err, req).
 */
export interface Srf extends Omit<DrachtioSrf, 'createUAS' | 'createUAC' | 'use' | 'connect'> {
  connect(opts: object): void;
  use(fn: (req: SrfRequest, res: SrfResponse, next: () => void) => void): void;
  register(fn: Handler): void;
  options(fn: Handler): void;
  message(fn: Handler): void;
  subscribe(fn: Handler): void;
  /** Forgets a dialog without any request (a subscription the far end already dropped: 481 to our NOTIFY). */
  removeDialog(dialog: SrfDialog): void;
  createUAS(req: SrfRequest, res: SrfResponse, opts: DrachtioSrf.CreateUASOptions): Promise<SrfDialog>;
  createUAC(uri: string, opts: DrachtioSrf.CreateUACOptions, progress?: { cbRequest?: (err: unknown, req: SrfSentInvite) => void; cbProvisional?: (res: SrfResponse) => void }): Promise<SrfDialog>;
}

/** The SIP listening points sip-server reported at connect ("udp/127.0.0.1:5060"), per Srf. */
const listening = new WeakMap<object, string[]>();

/** The address and port sip-server listens on for `transport` (the first one), or null. */
export function sipListeningPoint(srf: Srf, transport: 'udp' | 'tcp' = 'udp'): { host: string; port: number } | null {
  for (const hp of listening.get(srf) ?? []) {
    const m = /^(\w+)\/(\[[^\]]+\]|[^:]+):(\d+)$/.exec(hp.trim());
    if (m && m[1]!.toLowerCase() === transport) return { host: m[2]!, port: Number(m[3]) };
  }
  return null;
}

export interface ConnectOptions {
  host: string;
  port: number;
  secret: string;
  /** Give up after this long (default: never). */
  timeoutMs?: number;
  /** Pause between attempts. */
  retryMs?: number;
  onAttemptFailed?: (err: Error) => void;
}

/** drachtio-srf's connection internals that disconnectSrf needs (not in its typings). */
interface SrfWire {
  _app?: { client?: { wp?: { closing?: boolean; socket?: { connecting: boolean; destroy(): void }; reconnectVars?: { retryTimer?: NodeJS.Timeout | null } } } };
}

/**
 * Disconnect for good, also when sip-server closed the connection first (a shutdown stops both
 * processes at once): drachtio-srf's disconnect() then asserts on the socket it no longer has,
 * before it marks the connection closing, and its reconnect timer runs on.
 */
export function disconnectSrf(srf: Srf): void {
  const wp = (srf as unknown as SrfWire)._app?.client?.wp;
  if (wp) {
    wp.closing = true;
    const timer = wp.reconnectVars?.retryTimer;
    if (timer) clearTimeout(timer);
    if (wp.reconnectVars) wp.reconnectVars.retryTimer = null;
  }
  try {
    srf.disconnect();
  } catch {
    /* the connection was already gone */
  }
  // a reconnect attempt already dialling would otherwise connect and authenticate after all
  if (wp?.socket?.connecting) wp.socket.destroy();
}

/**
 * Connects, retrying until sip-server is up (it may start after us); drachtio-srf's own reconnect
 * (unbounded, capped back-off) keeps it connected across a sip-server restart afterwards.
 */
export function connectSrf(opts: ConnectOptions): Promise<Srf> {
  const srf = new SrfCtor();
  return new Promise<Srf>((resolve, reject) => {
    let settled = false;
    const timer =
      opts.timeoutMs === undefined
        ? null
        : setTimeout(() => {
            settled = true;
            disconnectSrf(srf); // also stops drachtio-srf's own retries
            reject(new Error(`drachtio server ${opts.host}:${opts.port} not reachable within ${opts.timeoutMs} ms`));
          }, opts.timeoutMs);
    srf.on('error', (err: Error) => {
      if (!settled) opts.onAttemptFailed?.(err);
    });
    srf.on('connect', (err: Error | null, hostport?: string) => {
      if (!err && typeof hostport === 'string') listening.set(srf, hostport.split(','));
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (err) {
        srf.disconnect();
        reject(err);
      } else resolve(srf);
    });
    redactDebugSecret(opts.secret);
    srf.connect({
      host: opts.host,
      port: opts.port,
      secret: opts.secret,
      reconnect: { retryMaxDelay: opts.retryMs ?? 1000 },
    });
  });
}
