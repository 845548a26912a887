/**
 * MediaRelay: this node's rtpengine (RTPENGINE_NG), or none configured. It makes the relay legs of
 * calls and says how rtpengine is doing (for the node's heartbeat and /readyz). Without rtpengine
 * (not configured, or down) a leg that needs it cannot be made: only that leg fails.
 */
import { NgError, RtpengineClient, type RtpengineHealth } from './client';
import { RelayLeg } from './relay-leg';
import type { FarProfile } from './sdp';

export type RelayStatus = RtpengineHealth | 'not_configured';

export class MediaRelay {
  private seq = 0;

  private constructor(private readonly client: RtpengineClient | null) {}

  /** `ng`: host:port of rtpengine's ng socket; undefined or '' for none. */
  static create(ng: string | undefined, opts: { pingMs?: number; timeoutMs?: number; sweepMs?: number } = {}): MediaRelay {
    return new MediaRelay(ng ? new RtpengineClient({ ng, ...opts }) : null);
  }

  get status(): RelayStatus {
    return this.client ? this.client.health : 'not_configured';
  }

  get ng(): string | null {
    return this.client?.ng ?? null;
  }

  /** Health changes (for logging); a no-op without rtpengine. */
  onHealth(fn: (to: RtpengineHealth, from: RtpengineHealth) => void): void {
    this.client?.on('health', fn);
  }

  /** A new relay leg for a call; throws an NgError when rtpengine is not configured or down. */
  leg(callRef: string, far: Exclude<FarProfile, 'plain'>): RelayLeg {
    if (!this.client) throw new NgError('offer', 'rtpengine not configured (RTPENGINE_NG)', true);
    if (this.client.health === 'down') throw new NgError('offer', `rtpengine unreachable at ${this.client.ng}`, true);
    return new RelayLeg(this.client, `ov-${callRef}-${++this.seq}`, far);
  }

  close(): void {
    this.client?.close();
  }
}
