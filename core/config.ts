/**
 * Every environment variable of the platform, validated once at start-up. `loadConfig` collects all
 * problems and throws one ConfigError listing each bad variable on its own line.
 * `.env.example` documents the same list; keep them in step.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { googleSttFromEnv, voiceVendorsFromEnv, type VendorEndpoint, type VoiceVendors } from './speech/vendors';
import { speechToSpeechFromEnv, type SpeechToSpeechVendors } from './speech/s2s-vendors';
import { parseTalkVoice, talkVoicesFromEnv, type TalkVoices } from './speech/talk-voices';
import { egressSettingsFromEnv, type EgressSettings } from './net/policy';
import { sipTarget, type SipTarget } from './extensions/sip-target';
import { parseHostPort } from './net/address';

/** `host:port` or `[v6]:port` → its parts (core/net/address.ts, dependency-free: the start command reads it too). */
export { parseHostPort };

const bool = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['true', 'false', '1', '0', 'yes', 'no', ''].includes(v), 'must be true or false')
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const port = z.coerce.number({ message: 'must be a port number' }).int('must be an integer').min(0).max(65535);

const url = (protocols: string[]) =>
  z
    .string()
    .trim()
    .refine(
      (v) => {
        try {
          return protocols.includes(new URL(v).protocol);
        } catch {
          return false;
        }
      },
      `must be a URL (${protocols.join(' or ')})`,
    );

const vendorUrl = url(['https:', 'http:', 'wss:', 'ws:']).optional();
const vendorKey = z.string().trim().min(1).optional();
const talkVoice = z
  .string()
  .trim()
  .superRefine((v, c) => {
    try {
      if (v) parseTalkVoice(v);
    } catch (e) {
      c.addIssue({ code: 'custom', message: (e as Error).message });
    }
  })
  .optional();

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Redis defaults, also read by sip-server's SIP capture (the same keys the API reads). */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:56379/0';
export const DEFAULT_REDIS_KEY_PREFIX = 'pl:';
/** Where the platform's pages are served from unless PUBLIC_URL says otherwise (sip-server's Origin check reads it too). */
export const DEFAULT_PUBLIC_URL = 'http://127.0.0.1:8080';
const schema = z.object({
  NODE_ENV: z.string().default('development'),
  DATA_DIR: z.string().min(1).default('.data'),
  DATABASE_URL: url(['postgres:', 'postgresql:']).default('postgres://postgres@127.0.0.1:55432/platform'),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(500).default(10),
  REDIS_URL: url(['redis:', 'rediss:']).default(DEFAULT_REDIS_URL),
  REDIS_KEY_PREFIX: z.string().max(64).default(DEFAULT_REDIS_KEY_PREFIX),
  HTTP_HOST: z.string().min(1).default('127.0.0.1'),
  HTTP_PORT: port.default(8080),
  PUBLIC_URL: url(['http:', 'https:']).default(DEFAULT_PUBLIC_URL),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters (unset it to have one generated)').optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  SMTP_URL: z.union([z.literal(''), url(['smtp:', 'smtps:'])]).default(''),
  MAIL_FROM: z.string().min(3).default('Platform <no-reply@localhost>'),
  OUTBOX_DIR: z.string().optional(),
  SIP_DOMAIN: z
    .string()
    .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i, 'must be a DNS name')
    .default('sip.localhost'),
  RATE_LIMIT_SCALE: z.coerce.number({ message: 'must be a number' }).min(0, 'must be >= 0 (0 disables limits)').default(1),
  TRUST_PROXY: bool.default(false),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  FLOW_SIMULATE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  TWILIO_REDIRECT_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
  TWILIO_REDIRECT_MAX_WAITING: z.coerce.number().int().min(1).max(100_000).default(500),
  TWILIO_ALERTS_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  TWILIO_ALERTS_RETENTION_EVERY_MS: z.coerce.number().int().min(100).max(86_400_000).default(3_600_000),
  EVALS_AUDIO_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
  EVALS_AUDIO_SWEEP_MS: z.coerce.number().int().min(10).max(86_400_000).default(600_000),
  BOOTSTRAP_ADMIN_USERNAME: z.string().min(1).default('admin'),
  DIRECT_SCOPE_VERSION: z.coerce.number({ message: 'must be an integer' }).int('must be an integer').min(1).default(1),
  METRICS_LISTEN: z
    .string()
    .trim()
    .refine((v) => v.toLowerCase() === 'off' || parseHostPort(v) !== null, 'must be host:port (e.g. 127.0.0.1:9464) or off')
    .default('127.0.0.1:9464'),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  // Read by their own modules (core/numbers, core/billing, control-api/provisioning, control-api/webhooks,
  // core/storage); checked here so a
  // bad value stops the start with the others.
  NUMBER_INVENTORY: z.string().refine(isJson, 'must be JSON (a list of number ranges)').optional(),
  NUMBER_INVENTORY_FILE: z
    .string()
    .refine((f) => fs.existsSync(f), 'file does not exist')
    .optional(),
  BILLING_INITIAL_CREDIT: z
    .string()
    .regex(/^\d{1,15}$/, 'must be a whole number of micros')
    .optional(),
  PROVISIONING_SIP_PROXY: z
    .string()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/, 'must be host or host:port')
    .optional(),
  // Replaced by EGRESS_ALLOW_CIDRS: "allow every private range" is what the egress policy exists to prevent.
  WEBHOOK_ALLOW_PRIVATE: bool.refine((v) => !v, 'removed: list the ranges the platform may reach in EGRESS_ALLOW_CIDRS (e.g. 10.1.0.0/16)').optional(),
  EGRESS_ALLOW_CIDRS: z
    .string()
    .superRefine((v, c) => egressProblem({ EGRESS_ALLOW_CIDRS: v }, c))
    .optional(),
  EGRESS_DNS_SERVERS: z
    .string()
    .superRefine((v, c) => egressProblem({ EGRESS_DNS_SERVERS: v }, c))
    .optional(),
  STORAGE_SIGNING_KEY: z
    .string()
    .refine((v) => v === 'none' || v.length >= 32, 'must be at least 32 characters (or "none")')
    .optional(),
  PROVISIONING_SIP_TRANSPORT: z.enum(['udp', 'tcp', 'tls', 'UDP', 'TCP', 'TLS'], { message: 'must be udp, tcp or tls' }).optional(),
  /** true: `*.reg.{SIP_DOMAIN}` resolves to the SIP server, provisioned phones need no outbound proxy. */
  PROVISIONING_WILDCARD_DNS: bool.default(false),
  // sip-server's (sip-config validates them fully); read here for the provisioning documents' outbound proxy.
  SIP_ADVERTISED_HOST: z.string().trim().min(1).optional(),
  SIP_PORT: port.optional(),
  SIP_TLS_PORT: port.optional(),
  // The browser phone (web/phone, control-api/webphone): where browsers reach SIP over WebSocket, and
  // how long an agent's browser SIP credential lives (core/workspace/web-sip-credentials.ts).
  SIP_WSS_PUBLIC_URL: url(['wss:', 'ws:']).optional(),
  // The Paddle customer portal (POST /billing_account/paddle_portal_session, core/carriers/paddle.ts);
  // read when asked. No key: that route answers 503.
  PADDLE_API_URL: url(['https:', 'http:']).optional(),
  PADDLE_API_KEY: z.string().trim().min(8, 'must be at least 8 characters').optional(),
  // Cloud voices (core/speech/vendors.ts): <VENDOR>_BASE_URL (default the vendor's public endpoint), <VENDOR>_API_KEY.
  ELEVENLABS_BASE_URL: vendorUrl,
  ELEVENLABS_API_KEY: vendorKey,
  CARTESIA_BASE_URL: vendorUrl,
  CARTESIA_API_KEY: vendorKey,
  DEEPGRAM_BASE_URL: vendorUrl,
  DEEPGRAM_API_KEY: vendorKey,
  OPENAI_BASE_URL: vendorUrl,
  OPENAI_API_KEY: vendorKey,
  // PEM file of extra CAs trusted for the OpenAI Realtime WebSocket (a gateway with a private CA)
  OPENAI_REALTIME_CA_FILE: z.string().trim().min(1).optional(),
  AZURE_BASE_URL: vendorUrl,
  AZURE_API_KEY: vendorKey,
  LMNT_BASE_URL: vendorUrl,
  LMNT_API_KEY: vendorKey,
  // Chat models of AIs (core/llm/endpoint.ts): gemini.* through Gemini's API, grok.* through xAI's.
  GEMINI_BASE_URL: vendorUrl,
  GEMINI_API_KEY: vendorKey,
  XAI_BASE_URL: vendorUrl,
  XAI_API_KEY: vendorKey,
  // Deepgram's Voice Agent API (speech-to-speech, media-app/ai/s2s/deepgram.ts); its key is DEEPGRAM_API_KEY
  DEEPGRAM_AGENT_BASE_URL: vendorUrl,
  // Amazon Polly: the endpoint (default https://polly.<AWS_REGION>.amazonaws.com) and the SigV4 credentials
  AWS_BASE_URL: vendorUrl,
  // `<access key id>:<secret access key>`, or the two in AWS's own variables
  AWS_API_KEY: vendorKey,
  AWS_ACCESS_KEY_ID: vendorKey,
  AWS_SECRET_ACCESS_KEY: vendorKey,
  AWS_REGION: z
    .string()
    .trim()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as us-east-1')
    .optional(),
  GOOGLE_BASE_URL: vendorUrl,
  GOOGLE_API_KEY: vendorKey,
  RIME_BASE_URL: vendorUrl,
  RIME_API_KEY: vendorKey,
  PLAYHT_BASE_URL: vendorUrl,
  PLAYHT_USER_ID: vendorKey,
  PLAYHT_API_KEY: vendorKey,
  // talk and speakings: provider_a|b|c spoken by a cloud voice, `<vendor>[:<voice id>]` (core/speech/talk-voices.ts)
  TTS_PROVIDER_A: talkVoice,
  TTS_PROVIDER_B: talkVoice,
  TTS_PROVIDER_C: talkVoice,
  // Google Speech-to-Text for recordings (provider google; core/speech/vendors.ts googleSttFromEnv)
  GOOGLE_STT_BASE_URL: vendorUrl,
  WEB_SIP_CREDENTIAL_TTL_SEC: z.coerce
    .number({ message: 'must be a number of seconds' })
    .int()
    .min(60)
    .max(12 * 3600, 'must be at most 43200 (12 hours)')
    .default(12 * 3600),
});

function egressProblem(env: NodeJS.ProcessEnv, ctx: z.RefinementCtx): void {
  try {
    egressSettingsFromEnv(env);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message.replace(/^EGRESS_[A-Z_]+: /, '') });
  }
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

export interface Config {
  nodeEnv: string;
  dataDir: string;
  databaseUrl: string;
  databasePoolMax: number;
  redisUrl: string;
  redisKeyPrefix: string;
  httpHost: string;
  httpPort: number;
  publicUrl: string;
  /** HS256 secret for every JWT the platform issues. */
  jwtSecret: string;
  logLevel: (typeof LOG_LEVELS)[number];
  smtpUrl: string;
  mailFrom: string;
  outboxDir: string;
  sipDomain: string;
  rateLimitScale: number;
  trustProxy: boolean;
  bodyLimitBytes: number;
  /** How long POST /flows/{id}/simulate waits for a media-app node's answer. */
  flowSimulateTimeoutMs: number;
  /** How long after a call's answer a Twilio redirect waits for the call's flow to start (control-api/twilio/flow-wait.ts). */
  twilioRedirectWaitMs: number;
  /** How many such redirects one control-api copy lets wait at once (then 429, Twilio code 20429). */
  twilioRedirectMaxWaiting: number;
  /** Twilio debugger records (twilio_alerts) older than this are deleted by the retention pass (control-api/jobs/alerts-retention.ts). */
  twilioAlertsRetentionDays: number;
  /** How often that pass runs (ms). */
  twilioAlertsRetentionEveryMs: number;
  /** Eval call audio is removed this many days after its run ended (0: kept with the run; core/evals/audio-removal.ts). */
  evalsAudioRetentionDays: number;
  /** How often control-api's eval audio sweep runs (ms): the retention, and deletions the store refused retried. */
  evalsAudioSweepMs: number;
  bootstrapAdminUsername: string;
  /** Direct tokens carry this; raising it invalidates every outstanding direct token. */
  directScopeVersion: number;
  /** Where the /metrics listener binds; null when METRICS_LISTEN is off. */
  metricsListen: { host: string; port: number } | null;
  /** When set, /metrics is served on the API port too, to `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /** The egress policy's settings (core/net): EGRESS_ALLOW_CIDRS, EGRESS_DNS_SERVERS, the platform's own hosts. */
  egress: EgressSettings;
  /** Where provisioned phones send SIP (core/extensions/sip-target.ts). */
  provisioningSip: SipTarget;
  /** The SIP WebSocket URL the browser phone connects to (SIP_WSS_PUBLIC_URL); null when not set. */
  sipWssPublicUrl: string | null;
  /** Lifetime of an agent's browser SIP credential, seconds (WEB_SIP_CREDENTIAL_TTL_SEC, ≤ 12 h). */
  webSipCredentialTtlSec: number;
  /** The cloud voice vendors' base URLs and platform-wide keys (core/speech/vendors.ts). */
  voices: VoiceVendors;
  /** provider_a|b|c of talk and speakings mapped to a cloud voice (TTS_PROVIDER_A|B|C); unmapped: local. */
  talkVoices: TalkVoices;
  /** Recordings' Google engine: GOOGLE_STT_BASE_URL / GOOGLE_API_KEY (media-app reads them again when it transcribes). */
  googleStt: VendorEndpoint;
  /** Extra CAs (PEM file path) trusted for the OpenAI Realtime WebSocket (OPENAI_REALTIME_CA_FILE); null: the system's only. */
  openaiRealtimeCaFile: string | null;
  /** Speech-to-speech vendors other than OpenAI (docs/ai.md "Speech-to-speech"): Gemini Live, Deepgram Voice Agent. */
  speechToSpeech: SpeechToSpeechVendors;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The bad value as it may appear in a log: secrets hidden, URL passwords masked. */
function shown(key: string, v: string | undefined): string {
  if (v === undefined) return 'nothing';
  if (/SECRET|PASSWORD|TOKEN|API_KEY/.test(key)) return `${v.length} characters`;
  return JSON.stringify(v.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@'));
}

/** Reads (or creates once) $DATA_DIR/jwt-secret so tokens survive restarts without configuration. */
function persistentSecret(dataDir: string): string {
  const file = path.join(dataDir, 'jwt-secret');
  try {
    const s = fs.readFileSync(file, 'utf8').trim();
    if (s.length >= 32) return s;
  } catch {
    /* not there yet */
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const s = randomBytes(48).toString('base64url');
  fs.writeFileSync(file, s + '\n', { mode: 0o600 });
  return s;
}

/**
 * Validates `env` (empty strings count as unset, except where empty is a meaningful value) and
 * returns a frozen typed config. Throws ConfigError with one line per bad variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, opts: { persistSecret?: boolean } = {}): Readonly<Config> {
  const input: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema.shape)) {
    const v = env[key];
    input[key] = v === '' && key !== 'SMTP_URL' ? undefined : v;
  }
  const parsed = schema.safeParse(input);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = String(issue.path[0] ?? '?');
      problems.push(`${key}: ${issue.message} (got ${shown(key, env[key])})`);
    }
  }
  // BILLING_RATE_<COST_TYPE> (core/billing/rates.ts): any number of them.
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith('BILLING_RATE_') && v !== undefined && v !== '' && !/^\d{1,12}$/.test(v)) {
      problems.push(`${k}: must be a whole number of micros (got ${shown(k, v)})`);
    }
  }
  const e = parsed.data;
  if (problems.length > 0 || !e) throw new ConfigError(problems);

  const dataDir = path.resolve(e.DATA_DIR);
  const jwtSecret = e.JWT_SECRET ?? (opts.persistSecret === false ? randomBytes(48).toString('base64url') : persistentSecret(dataDir));
  return Object.freeze({
    nodeEnv: e.NODE_ENV,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    httpHost: e.HTTP_HOST,
    httpPort: e.HTTP_PORT,
    publicUrl: e.PUBLIC_URL.replace(/\/+$/, ''),
    jwtSecret,
    logLevel: e.LOG_LEVEL,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    outboxDir: path.resolve(e.OUTBOX_DIR ?? path.join(dataDir, 'outbox')),
    sipDomain: e.SIP_DOMAIN.toLowerCase(),
    rateLimitScale: e.RATE_LIMIT_SCALE,
    trustProxy: e.TRUST_PROXY,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    flowSimulateTimeoutMs: e.FLOW_SIMULATE_TIMEOUT_MS,
    twilioRedirectWaitMs: e.TWILIO_REDIRECT_WAIT_MS,
    twilioRedirectMaxWaiting: e.TWILIO_REDIRECT_MAX_WAITING,
    twilioAlertsRetentionDays: e.TWILIO_ALERTS_RETENTION_DAYS,
    twilioAlertsRetentionEveryMs: e.TWILIO_ALERTS_RETENTION_EVERY_MS,
    evalsAudioRetentionDays: e.EVALS_AUDIO_RETENTION_DAYS,
    evalsAudioSweepMs: e.EVALS_AUDIO_SWEEP_MS,
    bootstrapAdminUsername: e.BOOTSTRAP_ADMIN_USERNAME,
    directScopeVersion: e.DIRECT_SCOPE_VERSION,
    metricsListen: e.METRICS_LISTEN.toLowerCase() === 'off' ? null : parseHostPort(e.METRICS_LISTEN),
    metricsToken: e.METRICS_TOKEN ?? null,
    egress: Object.freeze(egressSettingsFromEnv({ ...env, PUBLIC_URL: e.PUBLIC_URL })),
    provisioningSip: Object.freeze(sipTarget(e)),
    sipWssPublicUrl: e.SIP_WSS_PUBLIC_URL ?? null,
    webSipCredentialTtlSec: e.WEB_SIP_CREDENTIAL_TTL_SEC,
    voices: voiceVendorsFromEnv(e),
    talkVoices: talkVoicesFromEnv(e),
    googleStt: googleSttFromEnv(e),
    openaiRealtimeCaFile: e.OPENAI_REALTIME_CA_FILE ?? null,
    speechToSpeech: speechToSpeechFromEnv(e),
  });
}
