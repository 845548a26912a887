/**
 * A call leg's RTP capture (docs/observability.md "RTP in the pcap"): with RTP_CAPTURE `headers` or
 * `full` on the node, each endpoint the call gets captures its first RTP_CAPTURE_MAX_PACKETS datagrams
 * (media-engine/worker/rtp-capture.ts); when the call's media ends the capture is stored in Redis for
 * control-api's pcap (core/media/rtp-capture.ts). Off (the default), nothing is started and the engine
 * records nothing. A failure is logged and never ends or delays the call beyond a bound.
 */
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { CallEndpoint } from '../media-server/endpoint';
import { storeRtpCapture, type RtpCaptureSettings } from '../../core/media/rtp-capture';

const TAKE_WAIT_MS = 2000;

export class CallRtpCapture {
  private ep: CallEndpoint | null = null;
  /** what earlier endpoints of the call captured (a re-INVITE or a new media path replaced them) */
  private readonly chunks: Promise<Uint8Array | null>[] = [];
  private finished = false;

  constructor(
    private readonly deps: { redis: Redis; prefix: string; logger: Logger; settings: RtpCaptureSettings },
    private readonly callId: () => string,
  ) {}

  get enabled(): boolean {
    return this.deps.settings.mode !== 'off';
  }

  /** The call's endpoint from now on (null: none); the previous one's capture is kept. */
  attach(ep: CallEndpoint | null): void {
    if (!this.enabled || this.finished || ep === this.ep) return;
    if (this.ep && !this.ep.destroyed) this.chunks.push(this.take(this.ep));
    this.ep = ep;
    if (!ep || ep.destroyed) return;
    ep.captureRtp({ maxPackets: this.deps.settings.maxPackets, headersOnly: this.deps.settings.mode === 'headers' }).catch((err: Error) =>
      this.deps.logger.warn({ err: err.message, call: this.callId() }, 'rtp capture not started'),
    );
  }

  /** Stores what the call's endpoints captured; call before the endpoint goes. */
  async finish(): Promise<void> {
    if (!this.enabled || this.finished) return;
    this.finished = true;
    if (this.ep && !this.ep.destroyed) this.chunks.push(this.take(this.ep));
    const parts = (await Promise.all(this.chunks)).filter((c): c is Uint8Array => c !== null && c.length > 0);
    if (!parts.length) return;
    const all = Buffer.concat(parts);
    await storeRtpCapture(this.deps.redis, this.deps.prefix, this.callId(), all, this.deps.settings.retentionSec).catch((err: Error) =>
      this.deps.logger.warn({ err: err.message, call: this.callId() }, 'rtp capture not stored'),
    );
  }

  /** The endpoint's capture within TAKE_WAIT_MS, or null. */
  private async take(ep: CallEndpoint): Promise<Uint8Array | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), TAKE_WAIT_MS)));
    try {
      return await Promise.race([ep.takeRtpCapture(), late]);
    } catch (err) {
      this.deps.logger.debug({ err: (err as Error).message, call: this.callId() }, 'rtp capture not read');
      return null;
    } finally {
      clearTimeout(timer);
    }
  }
}
