/**
 * The console's only way to the platform: the public REST API under /v1.0 and the auth group under
 * /auth, on the origin that served the page. Credentials are the HttpOnly `token` cookie that
 * POST /auth/login sets (same-origin requests carry it); the page never holds the token.
 */
import type { EvalCaller, EvalCheck, EvalTarget } from '../../core/evals/schema';
export interface ErrorDetail {
  recovery_endpoint?: string;
  deletion_effective_at?: string;
  [k: string]: unknown;
}

/** An API failure: the spec's error envelope, or a bare status (the auth group answers bare 400s). */
export class ApiError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly reason: string,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
  }
}

export interface Page<T> {
  result: T[];
  next_page_token: string;
}

type Query = Record<string, string | number | undefined>;

function url(path: string, query?: Query): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

async function failure(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { reason?: string; message?: string; details?: ErrorDetail[] } };
    if (body.error) return new ApiError(res.status, body.error.reason ?? 'ERROR', body.error.message ?? res.statusText, body.error.details ?? []);
  } catch {
    // a bare answer
  }
  return new ApiError(res.status, res.status === 401 ? 'AUTHENTICATION_REQUIRED' : 'HTTP_' + res.status, text || res.statusText || `HTTP ${res.status}`);
}

/** Listeners told about every 401 and account-status 403 (the session reacts: sign-in page, gate banner). */
const gateListeners = new Set<(e: ApiError) => void>();
export function onGateError(fn: (e: ApiError) => void): () => void {
  gateListeners.add(fn);
  return () => gateListeners.delete(fn);
}
export const isGateReason = (reason: string) => reason === 'ACCOUNT_FROZEN' || reason === 'ACCOUNT_EXPIRED' || reason === 'ACCOUNT_DELETED';

async function send<T>(method: string, path: string, body?: unknown, query?: Query): Promise<T> {
  const res = await fetch(url(path, query), {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    const e = await failure(res);
    if (path.startsWith('/v1.0/') && (e.httpStatus === 401 || isGateReason(e.reason))) for (const fn of gateListeners) fn(e);
    throw e;
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The versioned API: paths are given without the /v1.0 prefix. */
export const api = {
  get: <T>(path: string, query?: Query) => send<T>('GET', `/v1.0${path}`, undefined, query),
  /** Without `body`, nothing is sent (operations that take no body refuse even `{}`). */
  post: <T>(path: string, body?: unknown, query?: Query) => send<T>('POST', `/v1.0${path}`, body, query),
  put: <T>(path: string, body: unknown) => send<T>('PUT', `/v1.0${path}`, body),
  del: <T>(path: string, body?: unknown) => send<T>('DELETE', `/v1.0${path}`, body),
  /** A file the API serves (a voicemail message's WAV), as bytes; failures in the error envelope like the rest. */
  async bytes(path: string): Promise<ArrayBuffer> {
    const res = await fetch(`/v1.0${path}`, { credentials: 'same-origin' });
    if (!res.ok) {
      const e = await failure(res);
      if (e.httpStatus === 401 || isGateReason(e.reason)) for (const fn of gateListeners) fn(e);
      throw e;
    }
    return res.arrayBuffer();
  },
  /** A multipart upload (a greeting's WAV in part `file`). */
  async upload<T>(method: 'PUT' | 'POST', path: string, file: File): Promise<T> {
    const form = new FormData();
    form.append('file', file, file.name);
    const res = await fetch(`/v1.0${path}`, { method, credentials: 'same-origin', body: form });
    if (!res.ok) {
      const e = await failure(res);
      if (e.httpStatus === 401 || isGateReason(e.reason)) for (const fn of gateListeners) fn(e);
      throw e;
    }
    return (await res.json()) as T;
  },
  /** Every page of a list (bounded: at most `max` items). */
  async all<T>(path: string, query: Query = {}, max = 500): Promise<T[]> {
    const out: T[] = [];
    let token = '';
    do {
      const p = await send<Page<T>>('GET', `/v1.0${path}`, undefined, { ...query, page_size: 100, page_token: token || undefined });
      out.push(...p.result);
      token = p.next_page_token;
    } while (token && out.length < max);
    return out;
  },
};

/** The auth group (no version prefix). */
export const auth = {
  login: (username: string, password: string) => send<{ username: string }>('POST', '/auth/login', { username, password }),
  signup: (email: string, name: string) => send<Record<string, unknown>>('POST', '/auth/signup', { email, name, accepted_tos: true }),
  verify: (token: string) => send<{ customer: Customer }>('POST', '/auth/email-verify', { token }),
  resendVerification: (email: string) => send<Record<string, unknown>>('POST', '/auth/email-verify-resend', { email }),
  passwordForgot: (username: string) => send<Record<string, unknown>>('POST', '/auth/password-forgot', { username }),
  passwordReset: (token: string, password: string) => send<Record<string, unknown>>('POST', '/auth/password-reset', { token, password }),
  /** A frozen account's recovery: cancel the scheduled deletion. */
  cancelUnregister: () => send<Customer>('DELETE', '/auth/unregister'),
  signOut: () => send<void>('POST', '/console/sign-out'),
};

// ---- the records the console shows (the fields it reads) ----

/** The spec's Address; the one declaration is core/address.ts (web imports nothing outside web/): test/architecture/shapes.test.ts keeps them alike. */
export interface Address {
  type: string;
  target: string;
  target_name?: string;
  name?: string;
  detail?: string;
}
export interface Customer {
  id: string;
  email: string;
  name: string;
  status: string;
  webhook_method: string;
  webhook_uri: string;
  /** masked (its last 4 characters); whole only in the answer of POST /customer/webhook_secret */
  webhook_secret?: string;
  email_verified?: boolean;
}
export interface Agent {
  id: string;
  customer_id: string;
  username: string;
  name: string;
  status: string;
  permission: number;
  tag_ids: string[];
}
export interface Call {
  id: string;
  status: string;
  direction: string;
  source: Address;
  destination: Address;
  flow_id: string;
  activeflow_id: string;
  recording_id: string;
  recording_ids: string[];
  mute_direction: string;
  hangup_by: string;
  hangup_reason: string;
  tm_create: string | null;
  tm_progressing: string | null;
  tm_hangup: string | null;
  node_id?: string;
  master_call_id?: string;
  chained_call_ids?: string[];
  /** Our extension, written when the call's media ends (docs/observability.md "Call quality"). */
  quality?: CallQuality | null;
}
export interface QualitySummary {
  mos_min: number;
  mos_avg: number;
  loss_pct: number;
  jitter_ms: number | null;
  rtt_ms: number | null;
}
export interface CallQuality {
  codec: string;
  in: QualitySummary | null;
  out: QualitySummary | null;
}
/** One `call_quality` event's direction (a 5 s sample). */
export interface QualitySample {
  mos: number;
  r_factor: number;
  loss_pct: number;
  jitter_ms: number | null;
  rtt_ms: number | null;
}
/** GET /dashboard (our extension, docs/observability.md "Dashboard"): the one declaration the server builds and serves (type-only: erased from the bundle). */
export type { AiLatency, AiLatencyStage, Dashboard, DashboardBucket, DashboardRange, Percentiles, WorstCall } from '../../core/calls/dashboard-schema';
/** An eval run's call (GET /eval_runs/{id} `results[]`): the one declaration the server validates (type-only). */
export type { EvalCallResult, EvalCheckResult, EvalHeardSegment, EvalTranscriptLine, EvalTurnResult } from '../../core/evals/schema';
/** GET /eval_runs/{id}, its summary's parts and the run's events (docs/evals.md): the server's declarations (type-only). */
export type {
  CheckTally as EvalCheckTally,
  Comparison as EvalComparison,
  EvalRunEndedPayload,
  EvalRunJson as EvalRun,
  EvalRunProgressedPayload,
  StageLatency as EvalStage,
} from '../../core/evals/run-shape';
/** A scenario's parts (POST /eval_scenarios): the one declaration the server validates (type-only). */
export type { EvalCaller, EvalCheck, EvalTarget, EvalTurn } from '../../core/evals/schema';
/** GET /eval_scenarios/{id}. */
export interface EvalScenario {
  id: string;
  name: string;
  target: EvalTarget;
  caller: EvalCaller;
  checks: EvalCheck[];
  tm_create: string;
  tm_update: string;
}
/** GET /ais/{id} (the fields the console reads). */
export interface Ai {
  id: string;
  name: string;
  detail: string;
  engine_model: string;
  tm_update?: string;
}
/** GET /ais/{id}/versions/{number} (docs/evals.md "Agent versions"). */
export interface AiVersion {
  id: string;
  ai_id: string;
  number: number;
  /** the AI's configuration in this version (keys masked) */
  config: Record<string, unknown>;
  /** the fields this version changed (every field for version 1) */
  changed: string[];
  created_by: { type: 'accesskey' | 'agent' | 'delegate' | 'direct' | 'system'; id: string };
  tm_create: string;
}
export interface Action {
  id?: string;
  next_id?: string;
  type: string;
  option?: Record<string, unknown>;
}
export interface Flow {
  id: string;
  name: string;
  detail: string;
  actions: Action[];
  on_complete_flow_id: string;
  tm_update?: string | null;
}
export interface NumberRow {
  id: string;
  number: string;
  type: string;
  status: string;
  call_flow_id: string;
  name: string;
}
export interface Extension {
  id: string;
  name: string;
  extension: string;
  domain_name: string;
  username: string;
  password?: string;
}
export interface ProvisioningToken {
  token: string;
  url: string;
  expire: string;
}
export interface Recording {
  id: string;
  reference_type: string;
  reference_id: string;
  status: string;
  format?: string;
  tm_start?: string;
  tm_end?: string;
  tm_create?: string;
}
export interface Playfile {
  filename: string;
  direction: string;
  uri_download: string;
  tm_download_expire: string;
  filesize: number;
  peaks: number[];
  duration: number;
}
export interface Accesskey {
  id: string;
  name: string;
  detail: string;
  token?: string;
  tm_expire: string;
  tm_create?: string;
}
export interface TimelineEvent {
  event_type: string;
  timestamp?: string;
  tm_create?: string;
  data?: Record<string, unknown>;
}

/** GET /voicemail_boxes (with counts, our extension: docs/pbx.md "Voicemail"). */
export interface VoicemailBox {
  id: string;
  extension_id: string;
  number: string;
  name: string;
  greeting_unavailable: boolean;
  greeting_busy: boolean;
  greeting_name: boolean;
  new_count: number;
  old_count: number;
}
export interface VoicemailMessage {
  id: string;
  box_id: string;
  folder: 'new' | 'old';
  urgent: boolean;
  caller_type: string;
  caller_number: string;
  caller_name: string;
  call_id: string;
  /** Milliseconds. */
  duration: number;
  transcript: string;
  tm_create: string;
}
export interface PbxSettings {
  park_lot: string;
  park_slot_first: number;
  park_slot_last: number;
  park_timeout_sec: number;
}
export interface ParkedCall {
  slot: number;
  call_id: string;
  node_id: string;
  parker: Address | null;
  tm_parked: string;
  tm_timeout: string;
}
export interface LampDialog {
  id: string;
  state: string;
  direction: 'initiator' | 'recipient' | '';
  remote: string;
  remote_name: string;
  tm_start: string;
}
export type LampState = 'idle' | 'dialing' | 'ringing' | 'in_call';
/** GET /extension_states (our extension, docs/pbx.md "Console"); also the `extension_state_updated` event's data. */
export interface ExtensionState {
  id: string;
  extension: string;
  name: string;
  registered: boolean;
  state: LampState;
  dialogs: LampDialog[];
}
export interface SlotState {
  slot: number;
  state: 'free' | 'occupied';
  dialogs: LampDialog[];
}

export const PERM_SUPERADMIN = 1;
export const isSuperAdmin = (a: Agent | null) => a !== null && (a.permission & PERM_SUPERADMIN) !== 0;
/** ProjectSuperAdmin, CustomerAdmin or CustomerManager (core/permissions.ts): customer-wide topics and lists. */
export const canManage = (a: Agent) => (a.permission & (PERM_SUPERADMIN | 32 | 64)) !== 0;
/** ProjectSuperAdmin or CustomerAdmin (core/permissions.ts): the account's keys and secrets. */
export const canAdmin = (a: Agent) => (a.permission & (PERM_SUPERADMIN | 32)) !== 0;

export function errorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.reason}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}
