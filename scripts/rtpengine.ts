// The embedded rtpengine of the start command (scripts/start.ts): Debian's rtpengine-daemon in
// userspace on loopback, like the embedded Postgres and Redis, for the legs that need SRTP or
// DTLS + ICE. RTPENGINE_NG set in the environment means an external rtpengine: none is started.
import fs from 'node:fs';
import path from 'node:path';

/** Defaults: an ng port of its own and media ports clear of the media engine's 20000-30000. */
export const RTPENGINE_DEFAULTS = { ng: '127.0.0.1:52222', portMin: 40000, portMax: 44999 };

export interface EmbeddedRtpengine {
  /** What media-app gets as RTPENGINE_NG. */
  ng: string;
  command: string;
  args: string[];
}

/** The embedded rtpengine to run, or null when RTPENGINE_NG names an external one. */
export function embeddedRtpengine(env: NodeJS.ProcessEnv, dataDir: string): EmbeddedRtpengine | null {
  if (env.RTPENGINE_NG) return null;
  const min = Number(env.RTPENGINE_PORT_MIN || RTPENGINE_DEFAULTS.portMin);
  const max = Number(env.RTPENGINE_PORT_MAX || RTPENGINE_DEFAULTS.portMax);
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1024 || max > 65535 || min >= max) {
    throw new Error(`RTPENGINE_PORT_MIN/RTPENGINE_PORT_MAX: need 1024 <= min < max <= 65535 (got ${min}, ${max})`);
  }
  // the media address: where the engine binds, advertised as RTP_ADVERTISED_HOST when set (NAT)
  const bind = env.RTP_BIND_HOST || '127.0.0.1';
  const iface = env.RTP_ADVERTISED_HOST ? `${bind}!${env.RTP_ADVERTISED_HOST}` : bind;
  const dir = path.join(dataDir, 'rtpengine');
  fs.mkdirSync(dir, { recursive: true });
  return {
    ng: RTPENGINE_DEFAULTS.ng,
    command: 'rtpengine',
    args: [
      '--config-file=none',
      '--table=-1',
      '--foreground',
      '--log-stderr',
      '--log-level=5',
      `--interface=${iface}`,
      `--listen-ng=${RTPENGINE_DEFAULTS.ng}`,
      `--port-min=${min}`,
      `--port-max=${max}`,
      `--pidfile=${path.join(dir, 'rtpengine.pid')}`,
    ],
  };
}
