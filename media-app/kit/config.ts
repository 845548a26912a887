/**
 * media-app's own settings, next to the shared core config. The drachtio variables carry the same
 * names as sip-config's, so one .env serves both processes.
 */
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError, parseHostPort } from '../../core/config';
import { isWildcardIp, parseCidrList, type Cidr } from '../../core/net/address';
import type { QualityThresholds } from '../../core/quality/leg';
import { RTP_CAPTURE_MODES, type RtpCaptureSettings } from '../../core/media/rtp-capture';
import { DEFAULT_DIGEST_ALGORITHMS, digestAlgorithmsProblem, isDigestAlgorithm, type DigestAlgorithm } from '../../core/extensions/digest-algorithms';
import type { PinLockoutPolicy } from '../../core/voicemail/pin-lockout';
import { parseMediaServer, type MediaServerSetting } from './media-server';
import { promptCacheDir, switchPromptsDir } from '../../core/data-dirs';

const port = z.coerce.number({ message: 'must be a port number' }).int('must be an integer').min(1).max(65535);

const schema = z.object({
  DRACHTIO_HOST: z.string().min(1).default('127.0.0.1'),
  DRACHTIO_PORT: port.default(9022),
  DRACHTIO_SECRET: z.string().min(1).default('cymru'),
  MEDIA_APP_NODE_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 of letters, digits, ".", "_", "-"')
    .optional(),
  /** Heartbeat period; the node counts as gone (its calls are swept) 3 periods after its last beat. */
  MEDIA_APP_HEARTBEAT_MS: z.coerce.number().int().min(200).max(60_000).default(1000),
  /** Edges (Kamailio, deploy/kamailio/) whose X-Openvoice-Source header names a request's real sender: comma-separated CIDRs. */
  SIP_TRUSTED_PROXIES: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      try {
        parseCidrList(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
  /** SIGTERM drains the node (OPTIONS 503, no new calls or originates) for at most this long before it stops. */
  DRAIN_TIMEOUT_SEC: z.coerce.number().int().min(0).max(86_400).default(300),
  RTP_BIND_HOST: z.string().min(1).default('127.0.0.1'),
  RTP_PORT_MIN: port.default(20000),
  RTP_PORT_MAX: port.default(30000),
  RTP_ADVERTISED_HOST: z.string().min(1).optional(),
  MEDIA_WORKERS: z.coerce.number().int().min(1).max(64).optional(),
  /** nice value of the media worker threads (negative: the 20 ms clock wins the CPU; needs CAP_SYS_NICE) */
  MEDIA_WORKER_NICE: z.coerce.number().int().min(-20).max(19).optional(),
  /** SCHED_RR priority of the media worker threads (1..99), watched: dropped back to the nice value above MEDIA_WORKER_RT_MAX_CPU of a core. Unset: no real time. */
  MEDIA_WORKER_RT_PRIORITY: z.coerce.number().int().min(1).max(99).optional(),
  /** the watchdog's limit: share of one core a real-time media worker may use before it drops back (0.1..1) */
  MEDIA_WORKER_RT_MAX_CPU: z.coerce.number().min(0.1).max(1).default(0.8),
  /** The media backend (media-app/media-server/README.md): unset, the embedded engine; freeswitch://host:port?password=…, drachtio-fsmrf. */
  MEDIA_SERVER: z.string().optional(),
  /** How long connecting to MEDIA_SERVER's event socket may take (TCP, auth, the switch's answer) before it is given up. */
  MEDIA_SERVER_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5000),
  /** host:port where the fsmrf backend's audio fork server listens; the switch's mod_audio_fork dials it there (port 0: any free one). */
  MEDIA_SERVER_TAP_LISTEN: z
    .string()
    .refine((v) => parseHostPort(v) !== null, 'must be host:port')
    .default('127.0.0.1:0'),
  /** How long the switch may take to connect an audio fork to that server before the fork fails. */
  MEDIA_SERVER_TAP_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  /** After a lost event socket: the first reconnect's delay, doubled after each failed attempt up to MEDIA_SERVER_RECONNECT_MAX_MS. */
  MEDIA_SERVER_RECONNECT_MIN_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  MEDIA_SERVER_RECONNECT_MAX_MS: z.coerce.number().int().min(10).max(600_000).default(30_000),
  /** The directory media-app shares with the switch: it fetches a prompt URL there (a leg's play, a room's announcement) for the switch to play (default $DATA_DIR/switch-prompts). */
  MEDIA_SERVER_PROMPTS_DIR: z.string().trim().min(1).optional(),
  /** media-app's own cache of the prompts it fetches and synthesises for the switch, 0700 and its user's (default $DATA_DIR/prompt-cache). */
  MEDIA_SERVER_PROMPT_CACHE_DIR: z.string().trim().min(1).optional(),
  /** The most each cache of fetched prompts keeps (bodies and conversions: the engine's play URLs, media-app's own cache above for the switch), MB: least recently used first out. */
  MEDIA_SERVER_PROMPT_CACHE_MAX_MB: z.coerce.number().int().min(1).max(1_000_000).default(1024),
  /** The most each cache of synthesised speech keeps (the engine's, media-app's own), MB and prompts: least recently used first out (media-engine/tts/cache-trim.ts). */
  TTS_CACHE_MAX_MB: z.coerce.number().int().min(1).max(1_000_000).default(1024),
  TTS_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  /** rtpengine's ng socket (host:port) for SRTP / WebRTC legs; unset: those legs are refused (488). */
  RTPENGINE_NG: z
    .string()
    .refine((v) => parseHostPort(v) !== null, 'must be host:port')
    .optional(),
  REGISTRAR_MIN_EXPIRES: z.coerce.number().int().min(1).max(3600).default(60),
  REGISTRAR_MAX_EXPIRES: z.coerce.number().int().min(60).max(86400).default(3600),
  /** SUBSCRIBE (busy lamp, presence, message summary): shorter Expires get 423, longer ones are cut to the maximum */
  SUBSCRIBE_MIN_EXPIRES: z.coerce.number().int().min(1).max(3600).default(60),
  SUBSCRIBE_MAX_EXPIRES: z.coerce.number().int().min(60).max(86400).default(3600),
  /** subscriptions one extension may hold on one node; more are refused 403 (a phone with many BLF keys holds one per key) */
  SUBSCRIBE_MAX_PER_EXTENSION: z.coerce.number().int().min(1).max(10_000).default(300),
  /** Wrong voicemail PINs across calls (core/voicemail/pin-lockout.ts): per box within the window, then the box is locked */
  VOICEMAIL_PIN_LOCKOUT_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  VOICEMAIL_PIN_LOCKOUT_WINDOW_SEC: z.coerce.number().int().min(1).max(604_800).default(3600),
  VOICEMAIL_PIN_LOCKOUT_SEC: z.coerce.number().int().min(1).max(604_800).default(1800),
  /** wrong logins of one caller on any boxes within the window that lock the caller out of every box */
  VOICEMAIL_PIN_LOCKOUT_CALLER_FAILURES: z.coerce.number().int().min(1).max(10_000).default(10),
  REGISTRAR_LOCKOUT_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  REGISTRAR_LOCKOUT_WINDOW_SEC: z.coerce.number().int().min(1).max(86400).default(60),
  /** Failures from all addresses together that refuse an AOR to addresses that never authenticated for it. */
  REGISTRAR_LOCKOUT_AOR_FAILURES: z.coerce.number().int().min(1).max(100_000).default(50),
  REGISTRAR_LOCKOUT_AOR_WINDOW_SEC: z.coerce.number().int().min(1).max(86400).default(600),
  /**
   * Challenge order, most preferred first (RFC 8760); an extension's digest_algorithms overrides it.
   * MD5 alone by default: baresip 1.0 gives up on any line that is not MD5 (docs/edge.md).
   */
  SIP_DIGEST_ALGORITHMS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((x) => x.trim().toUpperCase())
        .filter(Boolean),
    )
    .refine((l) => digestAlgorithmsProblem(l) === null, 'must list MD5 and/or SHA-256')
    .transform((l) => l.filter(isDigestAlgorithm))
    .default([...DEFAULT_DIGEST_ALGORITHMS]),
  REGISTRAR_LOCKOUT_SEC: z.coerce.number().int().min(1).max(86400).default(300),
  CALL_DIAL_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(60_000),
  CALL_MAX_DURATION_MS: z.coerce.number().int().min(1000).max(86_400_000).default(3_600_000),
  /** RFC 4028 session timers (call/session-timer.ts): the interval we ask for (0: we never ask, but honour a peer's) and our Min-SE */
  SESSION_EXPIRES_SEC: z.coerce.number().int().min(0).max(86_400).default(1800),
  SESSION_MIN_SE_SEC: z.coerce.number().int().min(1).max(86_400).default(90),
  /** a call whose party sent no RTP or RTCP this long (not on hold, not only listening) ends (media_timeout); 0: off */
  MEDIA_INACTIVITY_TIMEOUT_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  /** How often the credit guard looks at this node's answered PSTN calls (media-app/billing); 0: never. */
  CREDIT_GUARD_INTERVAL_MS: z.coerce.number().int().min(0).max(60_000).default(2000),
  /** The host put in the Contact of outbound registrations (default: the address sip-server listens on). */
  SIP_ADVERTISED_HOST: z
    .string()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)$/, 'a host name or IP')
    .optional(),
  /** Outbound registration (media-app/outreg): settings re-read every OUTREG_SYNC_MS; retries back off from MIN to MAX. */
  OUTREG_SYNC_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
  OUTREG_RETRY_MIN_MS: z.coerce.number().int().min(100).max(3_600_000).default(5000),
  OUTREG_RETRY_MAX_MS: z.coerce.number().int().min(100).max(3_600_000).default(300_000),
  OUTREG_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(8000),
  // call quality (docs/observability.md "Call quality"): sample period and alarm thresholds
  QUALITY_SAMPLE_MS: z.coerce.number().int().min(1000).max(60_000).default(5000),
  QUALITY_ALARM_MOS: z.coerce.number().min(1).max(4.5).default(3.5),
  QUALITY_ALARM_LOSS_PCT: z.coerce.number().min(0).max(100).default(3),
  QUALITY_ALARM_JITTER_MS: z.coerce.number().min(0).max(10_000).default(30),
  QUALITY_ALARM_RTT_MS: z.coerce.number().min(0).max(60_000).default(300),
  // RTP in the call's pcap (docs/observability.md "RTP in the pcap"): off unless asked for (the audio is the customers' conversations)
  RTP_CAPTURE: z.enum(RTP_CAPTURE_MODES).default('off'),
  RTP_CAPTURE_MAX_PACKETS: z.coerce.number().int().min(1).max(100_000).default(3000),
  /** The account's Twilio Debugger webhook: how long one delivery may take (ms) and how many one customer may have in flight (more are dropped). */
  TWILIO_DEBUGGER_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  TWILIO_DEBUGGER_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(1000).default(4),
  RTP_CAPTURE_RETENTION_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(86_400),
  // Replaced by EGRESS_ALLOW_CIDRS (core/net): "allow every private range" is what the egress policy exists to prevent.
  FLOW_HTTP_ALLOW_PRIVATE: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === 'false' || v === '0', 'removed: list the ranges flows may reach in EGRESS_ALLOW_CIDRS (e.g. 10.1.0.0/16)'),
});

/** RFC 4028 session timers (call/session-timer.ts). */
export interface SessionTimerSettings {
  /** the interval we ask for, s (0: we never ask; a peer's is still honoured) */
  expiresSec: number;
  /** the smallest interval we take, s (Min-SE; a shorter one is refused 422) */
  minSeSec: number;
}

export interface MediaAppConfig {
  drachtio: { host: string; port: number; secret: string };
  nodeId: string;
  heartbeatMs: number;
  trustedProxies: Cidr[];
  drainTimeoutMs: number;
  rtp: {
    bindHost: string;
    min: number;
    max: number;
    advertisedHost: string | undefined;
    workers: number | undefined;
    workerNice: number | undefined;
    workerRealtime: { priority: number; maxCpuShare: number } | undefined;
  };
  /** The media backend: the embedded engine, or a FreeSWITCH event socket driven through drachtio-fsmrf. */
  mediaServer: MediaServerSetting;
  /** ms connecting to a freeswitch:// MEDIA_SERVER may take (fsmrf/connect.ts) */
  mediaServerConnectTimeoutMs: number;
  /** the fsmrf backend's audio fork server (media-server/fsmrf/fork-tap.ts) */
  mediaServerTaps: { host: string; port: number; connectTimeoutMs: number };
  /** the reconnect after a lost event socket (fsmrf/switch-link.ts): min doubling up to max, ms */
  mediaServerReconnect: { minMs: number; maxMs: number };
  /** MEDIA_SERVER_PROMPTS_DIR (fsmrf/shared-prompts.ts); undefined: $DATA_DIR/switch-prompts (promptsDir) */
  mediaServerPromptsDir: string | undefined;
  /** MEDIA_SERVER_PROMPT_CACHE_DIR; undefined: $DATA_DIR/prompt-cache (promptCachePath) */
  mediaServerPromptCacheDir: string | undefined;
  /** MEDIA_SERVER_PROMPT_CACHE_MAX_MB in bytes */
  mediaServerPromptCacheMaxBytes: number;
  /** TTS_CACHE_MAX_MB in bytes and TTS_CACHE_MAX_ENTRIES: every speech cache's bound */
  ttsCache: { maxBytes: number; maxEntries: number };
  /** rtpengine's ng address, or undefined (no relay: SRTP / WebRTC legs are refused). */
  rtpengineNg: string | undefined;
  registrar: {
    algorithms: DigestAlgorithm[];
    minExpires: number;
    maxExpires: number;
    lockoutFailures: number;
    lockoutWindowSec: number;
    lockoutSec: number;
    lockoutAorFailures: number;
    lockoutAorWindowSec: number;
  };
  subscriptions: { minExpires: number; maxExpires: number; maxPerExtension: number };
  voicemailPin: PinLockoutPolicy;
  dialTimeoutMs: number;
  maxDurationMs: number;
  /** RFC 4028 (call/session-timer.ts): expiresSec 0: we never ask for a session timer (a peer's is honoured) */
  sessionTimer: SessionTimerSettings;
  /** ms without RTP or RTCP from a call's party after which the call ends (0: never) */
  mediaInactivityMs: number;
  creditGuardIntervalMs: number;
  outreg: { advertisedHost: string | undefined; syncMs: number; retryMinMs: number; retryMaxMs: number; timeoutMs: number };
  quality: { sampleMs: number; thresholds: QualityThresholds };
  rtpCapture: RtpCaptureSettings;
  /** The account's Twilio Debugger webhook deliveries (media-app/twiml/debugger.ts). */
  twilioDebugger: { timeoutMs: number; maxInFlight: number };
}

/**
 * The directory media-app shares with the switch: MEDIA_SERVER_PROMPTS_DIR, else `switch-prompts` under
 * DATA_DIR, absolute. Our switch's ESL_SOUNDS_DIR has the same default (esl/config.ts), so with neither
 * set it plays what media-app fetched there (test/esl/config.test.ts checks the two agree).
 */
export function promptsDir(app: Pick<MediaAppConfig, 'mediaServerPromptsDir'>, dataDir: string): string {
  return app.mediaServerPromptsDir ? path.resolve(app.mediaServerPromptsDir) : switchPromptsDir(dataDir);
}

/** media-app's prompt cache (fsmrf/shared-prompts.ts): MEDIA_SERVER_PROMPT_CACHE_DIR, else `prompt-cache` under DATA_DIR, absolute. */
export function promptCachePath(app: Pick<MediaAppConfig, 'mediaServerPromptCacheDir'>, dataDir: string): string {
  return app.mediaServerPromptCacheDir ? path.resolve(app.mediaServerPromptCacheDir) : promptCacheDir(dataDir);
}

export function loadMediaAppConfig(env: NodeJS.ProcessEnv = process.env): MediaAppConfig {
  const input: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema.shape)) input[key] = env[key] === '' ? undefined : env[key];
  const r = schema.safeParse(input);
  const problems = r.success ? [] : r.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`);
  if (r.success && r.data.RTP_PORT_MIN >= r.data.RTP_PORT_MAX) problems.push('RTP_PORT_MIN: must be below RTP_PORT_MAX');
  if (r.success && r.data.SESSION_EXPIRES_SEC > 0 && r.data.SESSION_EXPIRES_SEC < r.data.SESSION_MIN_SE_SEC) problems.push('SESSION_EXPIRES_SEC: must not be below SESSION_MIN_SE_SEC');
  if (r.success && r.data.OUTREG_RETRY_MIN_MS > r.data.OUTREG_RETRY_MAX_MS) problems.push('OUTREG_RETRY_MIN_MS: must not exceed OUTREG_RETRY_MAX_MS');
  const mediaServer = parseMediaServer(input.MEDIA_SERVER);
  if ('problem' in mediaServer) problems.push(`MEDIA_SERVER: ${mediaServer.problem}`);
  // on the fsmrf backend the switch dials the fork server at this host (unused on the embedded engine)
  if (r.success && 'kind' in mediaServer && mediaServer.kind === 'freeswitch' && isWildcardIp(parseHostPort(r.data.MEDIA_SERVER_TAP_LISTEN)?.host ?? ''))
    problems.push('MEDIA_SERVER_TAP_LISTEN: the switch dials the fork server at this host, so it must be an address the switch reaches, not a wildcard');
  if (problems.length || !r.success || 'problem' in mediaServer) throw new ConfigError(problems);
  const e = r.data;
  return {
    drachtio: { host: e.DRACHTIO_HOST, port: e.DRACHTIO_PORT, secret: e.DRACHTIO_SECRET },
    nodeId: e.MEDIA_APP_NODE_ID ?? `${os.hostname()}-${process.pid}`.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 64),
    heartbeatMs: e.MEDIA_APP_HEARTBEAT_MS,
    trustedProxies: parseCidrList(e.SIP_TRUSTED_PROXIES),
    drainTimeoutMs: e.DRAIN_TIMEOUT_SEC * 1000,
    rtp: {
      bindHost: e.RTP_BIND_HOST,
      min: e.RTP_PORT_MIN,
      max: e.RTP_PORT_MAX,
      advertisedHost: e.RTP_ADVERTISED_HOST,
      workers: e.MEDIA_WORKERS,
      workerNice: e.MEDIA_WORKER_NICE,
      workerRealtime: e.MEDIA_WORKER_RT_PRIORITY === undefined ? undefined : { priority: e.MEDIA_WORKER_RT_PRIORITY, maxCpuShare: e.MEDIA_WORKER_RT_MAX_CPU },
    },
    mediaServer,
    mediaServerConnectTimeoutMs: e.MEDIA_SERVER_CONNECT_TIMEOUT_MS,
    mediaServerTaps: { ...parseHostPort(e.MEDIA_SERVER_TAP_LISTEN)!, connectTimeoutMs: e.MEDIA_SERVER_TAP_CONNECT_TIMEOUT_MS },
    mediaServerReconnect: { minMs: e.MEDIA_SERVER_RECONNECT_MIN_MS, maxMs: Math.max(e.MEDIA_SERVER_RECONNECT_MIN_MS, e.MEDIA_SERVER_RECONNECT_MAX_MS) },
    mediaServerPromptsDir: e.MEDIA_SERVER_PROMPTS_DIR,
    mediaServerPromptCacheDir: e.MEDIA_SERVER_PROMPT_CACHE_DIR,
    mediaServerPromptCacheMaxBytes: e.MEDIA_SERVER_PROMPT_CACHE_MAX_MB * 1024 * 1024,
    ttsCache: { maxBytes: e.TTS_CACHE_MAX_MB * 1024 * 1024, maxEntries: e.TTS_CACHE_MAX_ENTRIES },
    rtpengineNg: e.RTPENGINE_NG,
    registrar: {
      algorithms: e.SIP_DIGEST_ALGORITHMS,
      minExpires: e.REGISTRAR_MIN_EXPIRES,
      maxExpires: e.REGISTRAR_MAX_EXPIRES,
      lockoutFailures: e.REGISTRAR_LOCKOUT_FAILURES,
      lockoutWindowSec: e.REGISTRAR_LOCKOUT_WINDOW_SEC,
      lockoutSec: e.REGISTRAR_LOCKOUT_SEC,
      lockoutAorFailures: e.REGISTRAR_LOCKOUT_AOR_FAILURES,
      lockoutAorWindowSec: e.REGISTRAR_LOCKOUT_AOR_WINDOW_SEC,
    },
    subscriptions: { minExpires: e.SUBSCRIBE_MIN_EXPIRES, maxExpires: e.SUBSCRIBE_MAX_EXPIRES, maxPerExtension: e.SUBSCRIBE_MAX_PER_EXTENSION },
    voicemailPin: {
      failures: e.VOICEMAIL_PIN_LOCKOUT_FAILURES,
      windowSec: e.VOICEMAIL_PIN_LOCKOUT_WINDOW_SEC,
      lockSec: e.VOICEMAIL_PIN_LOCKOUT_SEC,
      callerFailures: e.VOICEMAIL_PIN_LOCKOUT_CALLER_FAILURES,
    },
    dialTimeoutMs: e.CALL_DIAL_TIMEOUT_MS,
    maxDurationMs: e.CALL_MAX_DURATION_MS,
    sessionTimer: { expiresSec: e.SESSION_EXPIRES_SEC, minSeSec: e.SESSION_MIN_SE_SEC },
    mediaInactivityMs: e.MEDIA_INACTIVITY_TIMEOUT_MS,
    creditGuardIntervalMs: e.CREDIT_GUARD_INTERVAL_MS,
    outreg: {
      advertisedHost: e.SIP_ADVERTISED_HOST,
      syncMs: e.OUTREG_SYNC_MS,
      retryMinMs: e.OUTREG_RETRY_MIN_MS,
      retryMaxMs: e.OUTREG_RETRY_MAX_MS,
      timeoutMs: e.OUTREG_TIMEOUT_MS,
    },
    quality: {
      sampleMs: e.QUALITY_SAMPLE_MS,
      thresholds: { mosBelow: e.QUALITY_ALARM_MOS, lossPctAbove: e.QUALITY_ALARM_LOSS_PCT, jitterMsAbove: e.QUALITY_ALARM_JITTER_MS, rttMsAbove: e.QUALITY_ALARM_RTT_MS },
    },
    rtpCapture: { mode: e.RTP_CAPTURE, maxPackets: e.RTP_CAPTURE_MAX_PACKETS, retentionSec: e.RTP_CAPTURE_RETENTION_SECONDS },
    twilioDebugger: { timeoutMs: e.TWILIO_DEBUGGER_TIMEOUT_MS, maxInFlight: e.TWILIO_DEBUGGER_MAX_IN_FLIGHT },
  };
}
