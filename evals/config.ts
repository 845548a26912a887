/**
 * The evals worker's settings from the environment (listed in .env.example, "voice agent evals").
 * `loadEvalsConfig` collects every problem and throws one error listing each bad variable on its own line.
 */
import net from 'node:net';
import { z } from 'zod';

export interface EvalsConfig {
  /** the platform's SIP edge the simulated callers dial (UDP) */
  edge: { host: string; port: number };
  /** the address the callers bind their SIP and RTP sockets on and write into Via, Contact and SDP */
  localHost: string;
  /** how often an idle worker looks for a run to claim */
  pollMs: number;
  /** a call whose INVITE has no final response within this is given up (408) */
  answerTimeoutMs: number;
  /** a call still up this long after its answer is hung up by the caller */
  maxCallMs: number;
  /** after a call ends, how long to wait for the platform to finish writing its records (call, ai_talk turns) */
  settleMs: number;
  /** runs one worker carries at once */
  maxRuns: number;
  /** a claimed run's lease: its worker renews it every leaseMs / 3; one not renewed for leaseMs is ended failed */
  leaseMs: number;
  /** a talk-over turn (say with after_agent_ms) waits at most this for the agent to be heard, then is skipped */
  agentWaitMs: number;
  /** a request to the customer's LLM vendor (a judge check, a goal caller's line) is given up after this */
  judgeTimeoutMs: number;
  /** a goal caller answers once the agent has been silent this long after its last voiced packet */
  goalReplySilenceMs: number;
  /** each call keeps at most this many seconds of each of its two audio tracks (the first ones) */
  audioMaxS: number;
  /** a run's calls start at least this far apart (a ramp, start-pacing.ts); 0: each lane's call at once */
  callSpacingMs: number;
  /** the worker's threads run at this nice value (priority.ts): the platform's threads go first; 0: as started */
  nice: number;
}

const ms = (min: number) => z.coerce.number({ message: 'must be a number of milliseconds' }).int('must be an integer').min(min);

function parseHostPort(v: string): { host: string; port: number } | null {
  const m = /^([^:]+):(\d{1,5})$/.exec(v.trim());
  if (!m || !net.isIPv4(m[1]!) || Number(m[2]) < 1 || Number(m[2]) > 65535) return null;
  return { host: m[1]!, port: Number(m[2]) };
}

const schema = z.object({
  EVALS_SIP_EDGE: z
    .string()
    .trim()
    .default('127.0.0.1:5060')
    .refine((v) => parseHostPort(v) !== null, 'must be an IPv4 address:port'),
  EVALS_LOCAL_HOST: z
    .string()
    .trim()
    .default('127.0.0.1')
    .refine((v) => net.isIPv4(v), 'must be an IPv4 address'),
  EVALS_POLL_MS: ms(10).default(1000),
  EVALS_ANSWER_TIMEOUT_MS: ms(100).default(30_000),
  EVALS_MAX_CALL_MS: ms(1000).default(300_000),
  EVALS_SETTLE_MS: ms(0).default(10_000),
  EVALS_LEASE_MS: ms(300).default(30_000),
  EVALS_AGENT_WAIT_MS: ms(100).default(30_000),
  EVALS_JUDGE_TIMEOUT_MS: ms(100).default(60_000),
  EVALS_GOAL_REPLY_SILENCE_MS: ms(100).default(1000),
  EVALS_AUDIO_MAX_S: z.coerce.number({ message: 'must be a number of seconds' }).int('must be an integer').min(1).max(3600).default(300),
  EVALS_CALL_SPACING_MS: ms(0).max(60_000).default(0),
  EVALS_MAX_RUNS: z.coerce.number({ message: 'must be a number' }).int('must be an integer').min(1).default(2),
  EVALS_NICE: z.coerce.number({ message: 'must be a number' }).int('must be an integer').min(0).max(19).default(10),
});

/** The variables this file reads (the .env.example test checks each is documented). */
export const EVALS_VARIABLES = Object.keys(schema.shape);

export function loadEvalsConfig(env: NodeJS.ProcessEnv = process.env): EvalsConfig {
  const vars = Object.fromEntries(EVALS_VARIABLES.map((k) => [k, env[k] === '' ? undefined : env[k]]));
  const r = schema.safeParse(vars);
  if (!r.success) throw new Error(r.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`).join('\n'));
  const c = r.data;
  return {
    edge: parseHostPort(c.EVALS_SIP_EDGE)!,
    localHost: c.EVALS_LOCAL_HOST,
    pollMs: c.EVALS_POLL_MS,
    answerTimeoutMs: c.EVALS_ANSWER_TIMEOUT_MS,
    maxCallMs: c.EVALS_MAX_CALL_MS,
    settleMs: c.EVALS_SETTLE_MS,
    maxRuns: c.EVALS_MAX_RUNS,
    leaseMs: c.EVALS_LEASE_MS,
    agentWaitMs: c.EVALS_AGENT_WAIT_MS,
    judgeTimeoutMs: c.EVALS_JUDGE_TIMEOUT_MS,
    goalReplySilenceMs: c.EVALS_GOAL_REPLY_SILENCE_MS,
    audioMaxS: c.EVALS_AUDIO_MAX_S,
    callSpacingMs: c.EVALS_CALL_SPACING_MS,
    nice: c.EVALS_NICE,
  };
}
