// sip-server configuration: environment-driven with defaults, validated with zod.
// Every bad value is reported on its own line naming the variable, e.g. "SIP_PORT: must be ≤ 65535".
import { z } from 'zod';
import { DEFAULT_PUBLIC_URL } from '../core/config';
import { canonicalOrigin } from '../core/sip/ws-origin';

export type SipTransportName = 'udp' | 'tcp' | 'tls';

/**
 * Product names (User-Agent product tokens, matched whole and case-insensitively) of SIP scanners and
 * attack tools. Monitoring and test tools (sipsak, nagios' check_sip, sipp, SIPp-based probes) are not
 * listed: a health check must get its answer.
 */
export const DEFAULT_SCANNER_USER_AGENTS = [
  'friendly-scanner',
  'sipvicious',
  'sipcli',
  'sip-scan',
  'sipscan',
  'vaxsipuseragent',
  'pplsip',
  'iwar',
  'sundayddr',
  'smap',
  'sip-sploit',
  'voipbuster',
  'nessus',
  'cisco-sipscan',
  'sipptk',
];

/** An RFC 3261 token, as a User-Agent product name is. */
const productToken = z.string().regex(/^[A-Za-z0-9.!%*_+`'~-]+$/, 'each entry is one product name (an RFC 3261 token: no spaces, "/" or quotes)');

const port = z.number().int().min(0).max(65535);
const ms = z.number().int().min(1).max(600_000);

export const sipConfigSchema = z.object({
  listen: z.object({
    /** Address the SIP sockets bind to. */
    host: z.string().min(1),
    /** UDP and TCP port (same number for both). 0 = ephemeral (tests). */
    port,
    /** TLS port; used only when tls is configured and 'tls' is in transports. */
    tlsPort: port,
    transports: z.array(z.enum(['udp', 'tcp', 'tls'])).min(1),
    /** SIP over WebSocket (RFC 7118), plain: off unless set (0 = ephemeral, tests). For development and tests. */
    wsPort: port.optional(),
    /** Address the plain ws listener binds to (loopback unless the operator says otherwise). */
    wsHost: z.string().min(1),
    /** SIP over secure WebSocket on listen.host with the tls certificate: off unless set. */
    wssPort: port.optional(),
    /** Host written into Via/Contact/Record-Route when different from the bound address (NAT, 0.0.0.0). */
    advertisedHost: z.string().min(1).optional(),
  }),
  tls: z.object({ certPath: z.string().min(1), keyPath: z.string().min(1) }).optional(),
  /** RFC 3261 17.1.1.1 timer values, milliseconds. */
  timers: z.object({ t1: ms, t2: ms, t4: ms }),
  limits: z.object({
    maxMessageSize: z.number().int().min(1024).max(1_048_576),
    maxHeaders: z.number().int().min(10).max(10_000),
    maxHeaderLength: z.number().int().min(256).max(1_048_576),
    /** SO_RCVBUF/SO_SNDBUF asked for on UDP sockets (the kernel caps it at rmem_max). */
    udpBufferBytes: z
      .number()
      .int()
      .min(65_536)
      .max(64 * 1024 * 1024),
    /** Concurrent server transactions before new requests get 503 + Retry-After. */
    maxServerTransactions: z.number().int().min(1),
    /** Idle TCP/TLS connections are closed after this many ms, unless a live dialog or an unexpired registration uses them. */
    tcpIdleTimeoutMs: z.number().int().min(1000),
    /** A proxied dialog (drachtio `proxy` with remainInDialog) is forgotten when no in-dialog request passed for this many ms. */
    proxyDialogIdleMs: z
      .number()
      .int()
      .min(1000)
      .max(7 * 24 * 3600_000),
    /** WebSocket pings this often; a connection that has not answered the previous one is closed. */
    wsPingIntervalMs: z.number().int().min(100).max(600_000),
    /** Open TCP/TLS/WebSocket connections one remote address may hold (more are refused; the allow-list is exempt). */
    maxConnectionsPerAddress: z.number().int().min(1),
  }),
  security: z.object({
    /**
     * Product names that mark a scanner: a request whose User-Agent has one of them as a product token
     * (the part before "/", whole, case-insensitive), or as its quoted From display name, is dropped.
     */
    uaBlocklist: z.array(productToken),
    /** Source IPs (exact, or IPv4 CIDR like 10.0.0.0/8) exempt from rate limits and bans. */
    allowlist: z.array(z.string().min(1)),
    /**
     * Origins (scheme://host[:port]) whose pages may open SIP over WebSocket, or "*" for any; a
     * handshake without Origin (not a browser) is always allowed. From the environment: PUBLIC_URL's
     * origin plus SIP_WS_ALLOWED_ORIGINS.
     */
    wsAllowedOrigins: z.array(z.string().refine((o) => o === '*' || canonicalOrigin(o) !== null, 'must be an origin (scheme://host[:port]) or *')).min(1),
    rateLimit: z.object({
      /** Sustained requests per second allowed per source address:port (token bucket refill). */
      requestsPerSecond: z.number().positive(),
      /** Bucket size: the burst tolerated before requests are refused. */
      burst: z.number().int().positive(),
      /** Requests refused within one second that trigger a ban. */
      banThreshold: z.number().int().positive(),
      /** Ban length, seconds; banned sources are dropped silently. */
      banSeconds: z.number().positive(),
      /** Ports of one address banned within banSeconds that ban the whole address (a NAT is not punished for one device). */
      addressBanPorts: z.number().int().min(1),
      /** An address's ports together may send this many times the per-port rate and burst. */
      addressRateFactor: z.number().min(1),
    }),
  }),
  drachtio: z.object({ host: z.string().min(1), port, secret: z.string().min(1) }),
  /** DNS servers ("ip" or "ip:port") for RFC 3263 NAPTR/SRV/A lookups; empty = the system's. */
  dns: z.object({ servers: z.array(z.string().min(1)) }),
});

export type SipConfig = z.infer<typeof sipConfigSchema>;

export const DEFAULT_SIP_CONFIG: SipConfig = {
  listen: { host: '0.0.0.0', port: 5060, tlsPort: 5061, transports: ['udp', 'tcp'], wsHost: '127.0.0.1' },
  timers: { t1: 500, t2: 4000, t4: 5000 },
  limits: {
    maxMessageSize: 65535,
    maxHeaders: 256,
    maxHeaderLength: 16384,
    udpBufferBytes: 4 * 1024 * 1024,
    maxServerTransactions: 5000,
    tcpIdleTimeoutMs: 300_000,
    proxyDialogIdleMs: 12 * 3600_000,
    wsPingIntervalMs: 30_000,
    maxConnectionsPerAddress: 1024,
  },
  security: {
    uaBlocklist: DEFAULT_SCANNER_USER_AGENTS,
    allowlist: [],
    wsAllowedOrigins: [new URL(DEFAULT_PUBLIC_URL).origin],
    rateLimit: { requestsPerSecond: 100, burst: 200, banThreshold: 200, banSeconds: 300, addressBanPorts: 4, addressRateFactor: 4 },
  },
  drachtio: { host: '127.0.0.1', port: 9022, secret: 'cymru' },
  dns: { servers: [] },
};

export class SipConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid sip-server configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'SipConfigError';
  }
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends (infer U)[] ? U[] : T[K] extends object ? DeepPartial<T[K]> : T[K] };
export type SipConfigInput = DeepPartial<SipConfig>;

/** Environment variable behind each config path (for error messages and .env.example). */
export const ENV_VARS: Record<string, string> = {
  'listen.host': 'SIP_LISTEN_HOST',
  'listen.port': 'SIP_PORT',
  'listen.tlsPort': 'SIP_TLS_PORT',
  'listen.transports': 'SIP_TRANSPORTS',
  'listen.advertisedHost': 'SIP_ADVERTISED_HOST',
  'listen.wsPort': 'SIP_WS_PORT',
  'listen.wsHost': 'SIP_WS_HOST',
  'listen.wssPort': 'SIP_WSS_PORT',
  'tls.certPath': 'SIP_TLS_CERT',
  'tls.keyPath': 'SIP_TLS_KEY',
  'timers.t1': 'SIP_T1_MS',
  'timers.t2': 'SIP_T2_MS',
  'timers.t4': 'SIP_T4_MS',
  'limits.maxMessageSize': 'SIP_MAX_MESSAGE_SIZE',
  'limits.maxHeaders': 'SIP_MAX_HEADERS',
  'limits.maxHeaderLength': 'SIP_MAX_HEADER_LENGTH',
  'limits.udpBufferBytes': 'SIP_UDP_BUFFER_BYTES',
  'limits.maxServerTransactions': 'SIP_MAX_SERVER_TRANSACTIONS',
  'limits.tcpIdleTimeoutMs': 'SIP_TCP_IDLE_TIMEOUT_MS',
  'limits.proxyDialogIdleMs': 'SIP_PROXY_DIALOG_IDLE_MS',
  'limits.wsPingIntervalMs': 'SIP_WS_PING_INTERVAL_MS',
  'limits.maxConnectionsPerAddress': 'SIP_MAX_CONNECTIONS_PER_ADDRESS',
  'security.uaBlocklist': 'SIP_UA_BLOCKLIST',
  'security.allowlist': 'SIP_ALLOWLIST',
  'security.wsAllowedOrigins': 'SIP_WS_ALLOWED_ORIGINS',
  'security.rateLimit.requestsPerSecond': 'SIP_RATE_LIMIT_RPS',
  'security.rateLimit.burst': 'SIP_RATE_LIMIT_BURST',
  'security.rateLimit.banThreshold': 'SIP_BAN_THRESHOLD',
  'security.rateLimit.banSeconds': 'SIP_BAN_SECONDS',
  'security.rateLimit.addressBanPorts': 'SIP_BAN_PORTS',
  'security.rateLimit.addressRateFactor': 'SIP_ADDRESS_RATE_FACTOR',
  'drachtio.host': 'DRACHTIO_HOST',
  'drachtio.port': 'DRACHTIO_PORT',
  'drachtio.secret': 'DRACHTIO_SECRET',
  'dns.servers': 'SIP_DNS_SERVERS',
};

function merge<T>(base: T, over: unknown): T {
  if (over === undefined) return base;
  if (Array.isArray(over) || typeof over !== 'object' || over === null || typeof base !== 'object' || base === null) return over as T;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) if (v !== undefined) out[k] = merge(out[k], v);
  return out as T;
}

/** Build and validate a config from defaults plus overrides (tests and programmatic use). */
export function makeSipConfig(input: SipConfigInput = {}): SipConfig {
  const merged = merge(DEFAULT_SIP_CONFIG, input);
  // TLS listens only when a certificate is configured; SIP_TRANSPORTS may still list it explicitly.
  if (merged.tls && !input.listen?.transports && !merged.listen.transports.includes('tls')) {
    merged.listen = { ...merged.listen, transports: [...merged.listen.transports, 'tls'] };
  }
  const r = sipConfigSchema.safeParse(merged);
  if (!r.success) {
    throw new SipConfigError(
      r.error.issues.map((i) => {
        // the env variable of the longest matching path prefix ("listen.transports.1" -> SIP_TRANSPORTS)
        const parts = i.path.map(String);
        let name = parts.join('.');
        for (let n = parts.length; n > 0; n--) {
          const env = ENV_VARS[parts.slice(0, n).join('.')];
          if (env) {
            name = env;
            break;
          }
        }
        return `${name}: ${i.message}`;
      }),
    );
  }
  if (r.data.listen.transports.includes('tls') && !r.data.tls) {
    throw new SipConfigError(['SIP_TRANSPORTS: tls listed but SIP_TLS_CERT/SIP_TLS_KEY are not set']);
  }
  if (r.data.listen.wssPort !== undefined && !r.data.tls) {
    throw new SipConfigError(['SIP_WSS_PORT: wss needs SIP_TLS_CERT/SIP_TLS_KEY']);
  }
  return r.data;
}

/** Read the configuration from environment variables (see ENV_VARS); throws SipConfigError listing every bad value. */
export function loadSipConfig(env: NodeJS.ProcessEnv = process.env, overrides: SipConfigInput = {}): SipConfig {
  const problems: string[] = [];
  const input: Record<string, unknown> = {};
  const setPath = (path: string, v: unknown): void => {
    const parts = path.split('.');
    let o = input;
    for (const p of parts.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
    o[parts[parts.length - 1]] = v;
  };
  const list = (s: string): string[] =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  for (const [path, name] of Object.entries(ENV_VARS)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const defaultValue = path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], DEFAULT_SIP_CONFIG);
    if (path === 'listen.transports')
      setPath(
        path,
        list(raw).map((t) => t.toLowerCase()),
      );
    else if (path === 'security.uaBlocklist') {
      // a leading '+' appends to the built-in scanner list instead of replacing it
      setPath(path, raw.startsWith('+') ? [...DEFAULT_SCANNER_USER_AGENTS, ...list(raw.slice(1))] : list(raw));
    } else if (Array.isArray(defaultValue) || path === 'security.allowlist') setPath(path, list(raw));
    else if (typeof defaultValue === 'number' || /port|Ms$|max|rate|burst|ban|t[124]$/i.test(path.split('.').pop()!)) {
      const n = Number(raw);
      if (!Number.isFinite(n) || raw.trim() === '') problems.push(`${name}: expected a number, got "${raw}"`);
      else setPath(path, n);
    } else setPath(path, raw);
  }
  // the platform's own pages (PUBLIC_URL, read by control-api too) always; SIP_WS_ALLOWED_ORIGINS adds to it
  const publicUrl = env.PUBLIC_URL?.trim() || DEFAULT_PUBLIC_URL;
  let own: string | null = null;
  try {
    const u = new URL(publicUrl);
    if (u.protocol === 'http:' || u.protocol === 'https:') own = u.origin;
  } catch {
    own = null;
  }
  if (own === null) problems.push(`PUBLIC_URL: must be an http(s) URL, got "${publicUrl}"`);
  const raw = (input.security as Record<string, unknown> | undefined)?.wsAllowedOrigins;
  const extra = Array.isArray(raw) ? raw.map(String) : [];
  const usable = extra.filter((o) => o === '*' || canonicalOrigin(o) !== null);
  for (const o of extra) if (!usable.includes(o)) problems.push(`SIP_WS_ALLOWED_ORIGINS: "${o}" is not an origin (scheme://host[:port]) nor *`);
  // (with a bad PUBLIC_URL the start stops on the problem above; the default only keeps the schema quiet)
  setPath('security.wsAllowedOrigins', [own ?? new URL(DEFAULT_PUBLIC_URL).origin, ...usable]);
  if (input.tls && !(input.tls as Record<string, unknown>).certPath) problems.push('SIP_TLS_CERT: required when SIP_TLS_KEY is set');
  if (input.tls && !(input.tls as Record<string, unknown>).keyPath) problems.push('SIP_TLS_KEY: required when SIP_TLS_CERT is set');
  try {
    const config = makeSipConfig(merge(input as SipConfigInput, overrides));
    if (problems.length) throw new SipConfigError(problems);
    return config;
  } catch (e) {
    if (e instanceof SipConfigError) throw new SipConfigError([...problems, ...e.problems]);
    throw e;
  }
}
