/**
 * The implicit subscription a REFER creates (RFC 3515 section 2.4.4, RFC 4488): NOTIFYs carrying a
 * sipfrag of the transfer's progress, sent beside the transfer and never in its way. One NOTIFY at a
 * time (RFC 6665 section 4.2.2: the next waits for the previous one's final response or timeout).
 * A NOTIFY answered with a failure (481: the phone dropped the subscription) or timing out (408)
 * ends the subscription: later reports are dropped, the transfer goes on. After the final report
 * (status >= 200, Subscription-State terminated) nothing more is sent.
 */
import type { Logger } from 'pino';
import type { CallSession } from '../call/session';
import type { Progress } from './engine';

type SubscriptionState = 'active' | 'final_queued' | 'gone';

export class ReferSubscription implements Progress {
  private chain: Promise<void> = Promise.resolve();
  private state: SubscriptionState = 'active';

  constructor(
    private readonly call: CallSession,
    private readonly logger: Logger,
    private readonly transferId: string,
  ) {}

  report(sipStatus: number, phrase: string): void {
    if (this.state !== 'active') return;
    const final = sipStatus >= 200;
    if (final) this.state = 'final_queued';
    this.chain = this.chain.then(() => this.send(sipStatus, phrase, final));
  }

  async flushed(maxMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.chain, new Promise<void>((r) => (timer = setTimeout(r, maxMs)))]);
    clearTimeout(timer);
  }

  private async send(sipStatus: number, phrase: string, final: boolean): Promise<void> {
    const dialog = this.call.dialog;
    if (this.state === 'gone' || !dialog || this.call.isEnded) {
      this.state = 'gone';
      return;
    }
    const log = { call: this.call.id, transfer: this.transferId, sipfrag: sipStatus };
    try {
      const res = await dialog.request({
        method: 'NOTIFY',
        headers: {
          Event: 'refer',
          'Subscription-State': final ? 'terminated;reason=noresource' : 'active;expires=60',
          'Content-Type': 'message/sipfrag;version=2.0',
        },
        body: `SIP/2.0 ${sipStatus} ${phrase}\r\n`,
      });
      if (res.status >= 300) {
        this.state = 'gone';
        this.logger.info({ ...log, status: res.status }, 'REFER NOTIFY refused or timed out: subscription ended, the transfer goes on');
      }
    } catch (err) {
      this.state = 'gone';
      this.logger.info({ ...log, err: (err as Error).message }, 'REFER NOTIFY not sent: subscription ended, the transfer goes on');
    }
  }
}
