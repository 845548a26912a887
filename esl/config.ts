/**
 * The event socket's settings from the environment (listed in .env.example, "event socket"). Off
 * unless ESL_LISTEN is set; then ESL_PASSWORD is required. `loadEslConfig` collects every problem and
 * throws one error listing each bad variable on its own line.
 */
import net from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import type { ConferenceFiles } from './conference/files';
import { recordingsDir, switchPromptsDir } from '../core/data-dirs';

export interface EslConfig {
  listen: { host: string; port: number };
  password: string;
  /** the IPv4 address:port `sofia status` reports for the drachtio_mrf profile (the SIP face's) */
  sipAddress: string;
  heartbeatMs: number;
  authTimeoutMs: number;
  authLimit: { max: number; windowMs: number };
  maxSessions: number;
  /** uuid_audio_fork: the WebSocket's opening handshake limit */
  forkConnectTimeoutMs: number;
  /** where the `conference` API's `play` reads and `recording` writes (absolute; esl/conference/files.ts) */
  conferenceFiles: ConferenceFiles;
}

const ms = (min: number) => z.coerce.number({ message: 'must be a number of milliseconds' }).int('must be an integer').min(min);

/** `8021` (loopback), `host:port` or `[v6]:port`. */
function parseListen(v: string): { host: string; port: number } | null {
  const m = /^(?:\[([^\]]+)\]:|([^:]+):)?(\d{1,5})$/.exec(v.trim());
  if (!m) return null;
  const port = Number(m[3]);
  const host = m[1] ?? m[2] ?? '127.0.0.1';
  if (port < 1 || port > 65535 || (m[1] !== undefined && !net.isIPv6(m[1]))) return null;
  return { host, port };
}

/** fsmrf reads the profile's address as dotted IPv4 and a port, nothing else. */
function parseSipAddress(v: string): string | null {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(v.trim());
  if (!m || !net.isIPv4(m[1]!) || Number(m[2]) < 1 || Number(m[2]) > 65535) return null;
  return `${m[1]}:${Number(m[2])}`;
}

const schema = z.object({
  ESL_LISTEN: z.string().trim().optional(),
  ESL_PASSWORD: z.string().optional(),
  ESL_SIP_ADDRESS: z.string().trim().optional(),
  ESL_HEARTBEAT_MS: ms(0).default(20_000),
  ESL_AUTH_TIMEOUT_MS: ms(1).default(25_000),
  ESL_AUTH_MAX_FAILURES: z.coerce.number({ message: 'must be a number' }).int('must be an integer').min(1).default(5),
  ESL_AUTH_WINDOW_MS: ms(1).default(60_000),
  ESL_MAX_SESSIONS: z.coerce.number({ message: 'must be a number' }).int('must be an integer').min(1).default(1000),
  ESL_AUDIO_FORK_CONNECT_TIMEOUT_MS: ms(1).default(5000),
  ESL_RECORDINGS_DIR: z.string().trim().min(1).optional(),
  ESL_SOUNDS_DIR: z.string().trim().min(1).optional(),
});

/**
 * The conference file roots, absolute: as set, else the platform's recordings and switch-prompts
 * directories under DATA_DIR (core/config's default `.data`; core/data-dirs.ts, what media-app uses too):
 * a room records where media-app's recordings are, and plays the prompts media-app fetched for it, with
 * neither set.
 */
function conferenceFiles(env: NodeJS.ProcessEnv, recordings: string | undefined, sounds: string | undefined): ConferenceFiles {
  const data = env.DATA_DIR || '.data';
  return { recordings: recordings ? path.resolve(recordings) : recordingsDir(data), sounds: sounds ? path.resolve(sounds) : switchPromptsDir(data) };
}

/** The variables this file reads (the .env.example test checks each is documented). */
export const ESL_VARIABLES = Object.keys(schema.shape);

/** null when ESL_LISTEN is unset or empty: the event socket is off. */
export function loadEslConfig(env: NodeJS.ProcessEnv = process.env): EslConfig | null {
  const vars = Object.fromEntries(ESL_VARIABLES.map((k) => [k, env[k] === '' ? undefined : env[k]]));
  const r = schema.safeParse(vars);
  const problems = r.success ? [] : r.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`);
  const listenText = typeof vars.ESL_LISTEN === 'string' ? vars.ESL_LISTEN.trim() : '';
  if (!listenText) {
    if (problems.length) throw new Error(problems.join('\n'));
    return null;
  }
  const listen = parseListen(listenText);
  if (!listen) problems.push('ESL_LISTEN: must be a port, host:port or [ipv6]:port');
  const password = vars.ESL_PASSWORD ?? '';
  if (!password) problems.push('ESL_PASSWORD: required when ESL_LISTEN is set');
  else if (password === 'ClueCon') problems.push("ESL_PASSWORD: must not be FreeSWITCH's published default");
  const sipAddress = parseSipAddress(vars.ESL_SIP_ADDRESS ?? '127.0.0.1:5080');
  if (!sipAddress) problems.push('ESL_SIP_ADDRESS: must be an IPv4 address:port');
  if (problems.length || !r.success) throw new Error(problems.join('\n'));
  const d = r.data;
  return {
    listen: listen!,
    password,
    sipAddress: sipAddress!,
    heartbeatMs: d.ESL_HEARTBEAT_MS,
    authTimeoutMs: d.ESL_AUTH_TIMEOUT_MS,
    authLimit: { max: d.ESL_AUTH_MAX_FAILURES, windowMs: d.ESL_AUTH_WINDOW_MS },
    maxSessions: d.ESL_MAX_SESSIONS,
    forkConnectTimeoutMs: d.ESL_AUDIO_FORK_CONNECT_TIMEOUT_MS,
    conferenceFiles: conferenceFiles(env, d.ESL_RECORDINGS_DIR, d.ESL_SOUNDS_DIR),
  };
}
