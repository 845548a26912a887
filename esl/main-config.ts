/**
 * What `esl/main.ts` needs besides the event socket's own settings (esl/config.ts): the sip-server the
 * SIP face is a drachtio application of (the one listening on ESL_SIP_ADDRESS; host, port and secret as
 * media-app's DRACHTIO_* are given), the media engine's RTP ports and workers, and how long a shutdown
 * may take. Listed in .env.example, "event socket". One line per bad variable.
 */
import { z } from 'zod';

export interface EslProcessConfig {
  /** the drachtio protocol of the face's sip-server */
  drachtio: { host: string; port: number; secret: string };
  rtp: { bindHost: string; advertisedHost: string | undefined; min: number; max: number; workers: number };
  /** a shutdown that has not closed everything within this long exits 1 and says so */
  stopTimeoutMs: number;
}

const int = (what: string) => z.coerce.number({ message: `must be ${what}` }).int('must be an integer');
const port = int('a port number').min(1).max(65535);

const schema = z.object({
  ESL_DRACHTIO_HOST: z.string().trim().min(1).default('127.0.0.1'),
  ESL_DRACHTIO_PORT: port.default(9023),
  ESL_DRACHTIO_SECRET: z.string().min(1).default('cymru'),
  ESL_RTP_BIND_HOST: z.string().trim().min(1).default('127.0.0.1'),
  ESL_RTP_ADVERTISED_HOST: z.string().trim().min(1).optional(),
  ESL_RTP_PORT_MIN: port.default(35000),
  ESL_RTP_PORT_MAX: port.default(39999),
  ESL_MEDIA_WORKERS: int('a number').min(1).max(64).default(1),
  ESL_STOP_TIMEOUT_MS: int('a number of milliseconds').min(1).default(5000),
});

/** The variables this file reads (the .env.example test checks each is documented). */
export const ESL_PROCESS_VARIABLES = Object.keys(schema.shape);

/** Throws one error listing each bad variable on its own line (never a secret's value). */
export function loadEslProcessConfig(env: NodeJS.ProcessEnv = process.env): EslProcessConfig {
  const vars = Object.fromEntries(ESL_PROCESS_VARIABLES.map((k) => [k, env[k] === '' ? undefined : env[k]]));
  const r = schema.safeParse(vars);
  const problems = r.success ? [] : r.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`);
  if (r.success && r.data.ESL_RTP_PORT_MIN >= r.data.ESL_RTP_PORT_MAX) problems.push('ESL_RTP_PORT_MIN: must be below ESL_RTP_PORT_MAX');
  if (problems.length || !r.success) throw new Error(problems.join('\n'));
  const d = r.data;
  return {
    drachtio: { host: d.ESL_DRACHTIO_HOST, port: d.ESL_DRACHTIO_PORT, secret: d.ESL_DRACHTIO_SECRET },
    rtp: { bindHost: d.ESL_RTP_BIND_HOST, advertisedHost: d.ESL_RTP_ADVERTISED_HOST, min: d.ESL_RTP_PORT_MIN, max: d.ESL_RTP_PORT_MAX, workers: d.ESL_MEDIA_WORKERS },
    stopTimeoutMs: d.ESL_STOP_TIMEOUT_MS,
  };
}
