// Our own switch (esl/: the media engine behind a FreeSWITCH event socket and the drachtio_mrf SIP
// face), as esl/main.ts starts it, for a platform whose media-app runs on the fsmrf backend
// (startPlatform({ mediaServer: 'fsmrf' })): MEDIA_SERVER names its event socket. The face answers
// fsmrf's INVITEs on a sip-server of its own (the caller gives it), as a FreeSWITCH beside the platform would.
import type { EgressSettings } from '../../core/net';
import { loadEslConfig } from '../../esl/config';
import { loadEslProcessConfig } from '../../esl/main-config';
import { startSwitch, type RunningSwitch, type SwitchLog } from '../../esl/process';
import { freePort } from '../ports';
import { portRange } from '../media-engine/support';

/** The event socket's password in tests (never a real one). */
export const TEST_SWITCH_PASSWORD = 'platform-switch-test-secret';

const FACE_CONNECT_MS = 10_000;

export interface TestSwitch {
  /** MEDIA_SERVER for media-app: freeswitch://127.0.0.1:<event socket port>?password=… */
  mediaServer: string;
  sw: RunningSwitch;
  stop(): Promise<void>;
}

/** The switch, its SIP face on the sip-server `face` (its SIP and drachtio ports, the drachtio secret). */
/** `egress`: what it may fetch (the platform's EGRESS_* settings, as a FreeSWITCH beside it would be allowed). */
/** `recordingsDir`: where `conference … recording start` may write (ESL_RECORDINGS_DIR; the platform's recordings directory). */
/** `soundsDir`: where `conference … play` may read (ESL_SOUNDS_DIR; media-app's MEDIA_SERVER_PROMPTS_DIR, shared with the switch). */
/** `dataDir`: the switch's DATA_DIR, what its unset directories default under (esl/config.ts). */
export async function startTestSwitch(
  face: { sipPort: number; drachtioPort: number; secret: string },
  log: SwitchLog,
  egress?: EgressSettings,
  opts: { recordingsDir?: string; soundsDir?: string; dataDir?: string } = {},
): Promise<TestSwitch> {
  const port = await freePort();
  const rtp = portRange();
  const cfg = loadEslConfig({
    ESL_LISTEN: `127.0.0.1:${port}`,
    ESL_PASSWORD: TEST_SWITCH_PASSWORD,
    ESL_SIP_ADDRESS: `127.0.0.1:${face.sipPort}`,
    ESL_HEARTBEAT_MS: '0',
    ...(opts.recordingsDir ? { ESL_RECORDINGS_DIR: opts.recordingsDir } : {}),
    ...(opts.soundsDir ? { ESL_SOUNDS_DIR: opts.soundsDir } : {}),
    ...(opts.dataDir ? { DATA_DIR: opts.dataDir } : {}),
  });
  if (!cfg) throw new Error('the test switch has no event socket configuration');
  const proc = loadEslProcessConfig({
    ESL_DRACHTIO_HOST: '127.0.0.1',
    ESL_DRACHTIO_PORT: String(face.drachtioPort),
    ESL_DRACHTIO_SECRET: face.secret,
    ESL_RTP_PORT_MIN: String(rtp.min),
    ESL_RTP_PORT_MAX: String(rtp.max),
  });
  const sw = await startSwitch(cfg, proc, log, egress);
  // the face's connection is retried for ever: a test waits for it a bounded time
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), FACE_CONNECT_MS)));
  const got = await Promise.race([sw.faceConnected, late]).finally(() => clearTimeout(timer));
  if (got === 'late') {
    await sw.stop();
    throw new Error(`the test switch's SIP face did not connect to its sip-server within ${FACE_CONNECT_MS} ms`);
  }
  return { mediaServer: `freeswitch://127.0.0.1:${sw.listening.port}?password=${TEST_SWITCH_PASSWORD}`, sw, stop: () => sw.stop() };
}
