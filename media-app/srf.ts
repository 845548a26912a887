/**
 * The drachtio-srf connection to sip-server. drachtio-srf ships no type declarations we can use, so
 * the few shapes media-app touches are declared here; everything else stays `any` behind them.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const SrfCtor: new (tags?: string[]) => Srf = require('drachtio-srf');

/* eslint-disable @typescript-eslint/no-explicit-any */
export interface SrfRequest {
  method: string;
  uri: string;
  body: string;
  callId: string;
  source_address: string;
  source_port: number;
  protocol: string;
  get(name: string): string | undefined;
  has(name: string): boolean;
  getParsedHeader(name: string): any;
  on(event: 'cancel', fn: () => void): void;
  cancel?(): void;
}

export interface SrfResponse {
  send(status: number, reason?: string | object, opts?: object): void;
  finalResponseSent?: boolean;
}

export interface SrfDialog {
  sip: { callId: string; localTag: string; remoteTag: string };
  local: { sdp: string };
  remote: { sdp: string };
  connected: boolean;
  destroy(opts?: object): Promise<void>;
  modify(sdp: string): Promise<string>;
  request(opts: object): Promise<any>;
  on(event: string, fn: (...args: any[]) => void): void;
}

export interface Srf {
  connect(opts: object): void;
  disconnect(): void;
  on(event: string, fn: (...args: any[]) => void): void;
  removeAllListeners(event?: string): void;
  /** Middleware run, in order of use, before the method handlers for every new request. */
  use(fn: (req: SrfRequest, res: SrfResponse, next: () => void) => void): void;
  register(fn: (req: SrfRequest, res: SrfResponse) => void): void;
  invite(fn: (req: SrfRequest, res: SrfResponse) => void): void;
  options(fn: (req: SrfRequest, res: SrfResponse) => void): void;
  createUAS(req: SrfRequest, res: SrfResponse, opts: object): Promise<SrfDialog>;
  createUAC(uri: string, opts: object, progress?: object): Promise<SrfDialog>;
  locals: Record<string, unknown>;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

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
            try {
              srf.disconnect();
            } catch {
              /* never connected */
            }
            reject(new Error(`drachtio server ${opts.host}:${opts.port} not reachable within ${opts.timeoutMs} ms`));
          }, opts.timeoutMs);
    srf.on('error', (err: Error) => {
      if (!settled) opts.onAttemptFailed?.(err);
    });
    srf.on('connect', (err: Error | null) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (err) {
        srf.disconnect();
        reject(err);
      } else resolve(srf);
    });
    srf.connect({
      host: opts.host,
      port: opts.port,
      secret: opts.secret,
      reconnect: { retryMaxDelay: opts.retryMs ?? 1000 },
    });
  });
}
