/**
 * The processes the start command supervises (scripts/start.ts), in start order, with the environment
 * each gets on top of the command's own. The platform's three always; when ESL_LISTEN is set, the
 * switch too (esl/README.md): a second sip-server on the drachtio_mrf profile's SIP address
 * (ESL_SIP_ADDRESS, where fsmrf's INVITEs go, as to FreeSWITCH's port 5080) whose drachtio port
 * (ESL_DRACHTIO_*) the switch's SIP face connects to, and `esl/main.ts` (media engine, SIP face, event
 * socket). Off by default: the README's start command starts only the three. The evals worker
 * (evals/main.ts, issue 56: it places eval runs' simulated calls) always runs beside them, dialling this
 * platform's own SIP edge unless EVALS_SIP_EDGE names another. With MEDIA_SERVER set too, the switch's
 * egress allows media-app's audio fork server (switchEgressEnv) and it reads media-app's prompts
 * directory (switchSoundsEnv).
 */

import net from 'node:net';
import { isWildcardIp, parseHostPort } from '../core/net/address';

export interface PlatformProcess {
  name: string;
  entry: string;
  nodeArgs: string[];
  /** set over the start command's environment for this process */
  env: Record<string, string>;
}

/**
 * Order matters: the SIP server first, so media-app finds it; control-api last, it prints the bootstrap login.
 * media-app runs with --single-threaded-gc: a media worker's garbage collection then never waits for V8's
 * helper threads, which are shared by the process and run at ordinary priority. With them, a real-time or
 * negative-nice worker stalled behind a busy neighbour whenever it collected (priority inversion:
 * docs/benchmarks.md, media legs beside a busy neighbour).
 */
const PLATFORM: PlatformProcess[] = [
  { name: 'sip-server', entry: 'sip-server/main.ts', nodeArgs: [], env: {} },
  { name: 'media-app', entry: 'media-app/main.ts', nodeArgs: ['--single-threaded-gc'], env: {} },
  { name: 'control-api', entry: 'control-api/main.ts', nodeArgs: [], env: {} },
];

/** The evals worker's edge: this platform's sip-server (its listen address, loopback for a wildcard), unless EVALS_SIP_EDGE is set. */
function evalsEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  if (env.EVALS_SIP_EDGE?.trim()) return {};
  const host = env.SIP_LISTEN_HOST?.trim();
  return { EVALS_SIP_EDGE: `${!host || host === '0.0.0.0' ? '127.0.0.1' : host}:${env.SIP_PORT?.trim() || '5060'}` };
}

/** The platform's three with the evals worker after media-app (control-api last: it prints the bootstrap login). */
function withEvals(env: NodeJS.ProcessEnv, procs: PlatformProcess[]): PlatformProcess[] {
  const at = procs.findIndex((p) => p.name === 'control-api');
  return [...procs.slice(0, at), { name: 'evals', entry: 'evals/main.ts', nodeArgs: [], env: evalsEnv(env) }, ...procs.slice(at)];
}

/**
 * The switch's sip-server: SIP on ESL_SIP_ADDRESS only (UDP and TCP, no TLS, no WebSocket, no metrics
 * listener, no capture: the calls' own SIP is captured by the platform's sip-server), its drachtio
 * protocol where ESL_DRACHTIO_* say. Values esl/config.ts and esl/main-config.ts check again.
 */
function switchSipEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const [host, port] = (env.ESL_SIP_ADDRESS?.trim() || '127.0.0.1:5080').split(':') as [string, string | undefined];
  return {
    SIP_LISTEN_HOST: host,
    SIP_PORT: port ?? '5080',
    SIP_ADVERTISED_HOST: host,
    SIP_TRANSPORTS: 'udp,tcp',
    SIP_TLS_CERT: '',
    SIP_TLS_KEY: '',
    SIP_WS_PORT: '',
    SIP_WSS_PORT: '',
    SIP_METRICS_LISTEN: 'off',
    SIP_CAPTURE: 'off',
    DRACHTIO_OUTBOUND: '',
    DRACHTIO_HOST: env.ESL_DRACHTIO_HOST?.trim() || '127.0.0.1',
    DRACHTIO_PORT: env.ESL_DRACHTIO_PORT?.trim() || '9023',
    DRACHTIO_SECRET: env.ESL_DRACHTIO_SECRET || 'cymru',
  };
}

/**
 * The switch's egress when media-app runs on the fsmrf backend (MEDIA_SERVER set) against it: its
 * uuid_audio_fork dials media-app's audio fork server at MEDIA_SERVER_TAP_LISTEN (default
 * 127.0.0.1:0, media-app/media-server/README.md "Audio taps"), which the switch's egress policy (the
 * EGRESS_* it applies, esl/process.ts) refuses as a private address unless allowed. So that host (an
 * address, /32 or /128; `localhost` as both loopbacks) is added to the switch's EGRESS_ALLOW_CIDRS,
 * for the switch alone: media-app and the others keep the operator's list. A name other than
 * localhost cannot be an allowlist entry: refused with a message naming the variable.
 */
function switchEgressEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  if (!env.MEDIA_SERVER?.trim()) return {};
  const listen = env.MEDIA_SERVER_TAP_LISTEN?.trim() || '127.0.0.1:0';
  const host = parseHostPort(listen)?.host;
  if (!host) throw new Error(`MEDIA_SERVER_TAP_LISTEN: must be host:port (got ${JSON.stringify(listen.slice(0, 80))})`);
  if (isWildcardIp(host))
    throw new Error(`MEDIA_SERVER_TAP_LISTEN: the switch dials the fork server at this host, so it must be an address the switch reaches, not a wildcard (got ${JSON.stringify(host)})`);
  let cidrs: string[];
  if (host.toLowerCase() === 'localhost') cidrs = ['127.0.0.1/32', '::1/128'];
  else if (net.isIPv4(host)) cidrs = [`${host}/32`];
  else if (net.isIPv6(host)) cidrs = [`${host}/128`];
  else throw new Error(`MEDIA_SERVER_TAP_LISTEN: the switch (ESL_LISTEN) must be allowed to reach it, so its host must be an IP address or localhost (got ${JSON.stringify(host)})`);
  const own = (env.EGRESS_ALLOW_CIDRS ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  return { EGRESS_ALLOW_CIDRS: [...own, ...cidrs.filter((c) => !own.includes(c))].join(',') };
}

/**
 * The switch's sounds directory when media-app runs on the fsmrf backend (MEDIA_SERVER set) against it:
 * a room plays only inside ESL_SOUNDS_DIR, and what it plays there is what media-app fetched into
 * MEDIA_SERVER_PROMPTS_DIR. Both default to $DATA_DIR/switch-prompts; an operator who moved the prompts
 * alone has the switch read them there too. An ESL_SOUNDS_DIR of the operator's stays as set.
 */
function switchSoundsEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const prompts = env.MEDIA_SERVER_PROMPTS_DIR?.trim();
  if (!env.MEDIA_SERVER?.trim() || !prompts || env.ESL_SOUNDS_DIR?.trim()) return {};
  return { ESL_SOUNDS_DIR: prompts };
}

/** Throws an Error naming the variable when a setting the processes' environments are made from is bad. */
export function platformProcesses(env: NodeJS.ProcessEnv): PlatformProcess[] {
  if (!env.ESL_LISTEN?.trim()) return withEvals(env, PLATFORM);
  return withEvals(env, [
    // before media-app: a media-app on the fsmrf backend connects to the event socket at start
    PLATFORM[0]!,
    { name: 'switch-sip', entry: 'sip-server/main.ts', nodeArgs: [], env: switchSipEnv(env) },
    { name: 'esl', entry: 'esl/main.ts', nodeArgs: [], env: { ...switchEgressEnv(env), ...switchSoundsEnv(env) } },
    ...PLATFORM.slice(1),
  ]);
}
