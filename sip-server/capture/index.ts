/**
 * The sip-server's SIP capture from its environment: SIP_CAPTURE (on|off, default on),
 * SIP_CAPTURE_RETENTION_SECONDS (default 86400), SIP_CAPTURE_MAX_PER_CALL (default 500), written to
 * REDIS_URL under REDIS_KEY_PREFIX (the platform's Redis and prefix, where the timeline routes read).
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { captureSettings } from '../../core/sip/capture-store';
import { SipCapture } from './capture';

export { SipCapture, type SipCaptureHook, type CaptureStats } from './capture';

export interface RunningCapture {
  capture: SipCapture;
  close(): Promise<void>;
}

/** null when capture is off. Throws naming a bad setting. */
export function startCapture(env: NodeJS.ProcessEnv, log?: Logger): RunningCapture | null {
  const settings = captureSettings(env);
  if (!settings.enabled) return null;
  // commands fail at once while Redis is away (the capture drops and counts), never pile up
  const redis = new Redis(env.REDIS_URL || 'redis://127.0.0.1:56379/0', { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
  redis.on('error', (err: Error) => log?.debug({ err: err.message }, 'SIP capture Redis error'));
  const capture = new SipCapture(redis, env.REDIS_KEY_PREFIX ?? '', settings, log);
  return {
    capture,
    async close() {
      await capture.close().catch(() => undefined);
      redis.disconnect();
    },
  };
}
