/**
 * The credit guard: every CREDIT_GUARD_INTERVAL_MS it looks at this node's answered PSTN calls (admitted
 * by the dial policy), reads each customer's balance and all of that customer's answered PSTN calls on
 * every node, and ends the calls of its own that the balance can no longer pay (core/billing/credit.ts),
 * with `data.balance_exhausted` set so the API says why. Checking every node's calls against one balance
 * keeps two nodes from each spending it whole; each node ends only its own calls.
 */
import type { Logger } from 'pino';
import type { Knex } from '../../core/db/knex';
import { clock } from '../../core/clock';
import { rates } from '../../core/billing/rates';
import { billingAccountsRepo } from '../../core/repos/billing-accounts';
import { callsToEnd, type LiveCharge } from '../../core/billing/credit';
import type { CallRegistry, OwnedCall } from '../call/registry';
import { callsRepo } from '../../core/repos/calls';

/** Ahead of the next check, plus the time a hangup takes. */
const MARGIN_MS = 3000;

export class CreditGuard {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly db: Knex,
    private readonly calls: CallRegistry<OwnedCall>,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.check()
        .then(
          () => undefined,
          (err: Error) => this.logger.warn({ err: err.message }, 'credit guard check failed'),
        )
        .finally(() => (this.running = null));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass; returns the ids it ended (for tests and logs). */
  async check(): Promise<string[]> {
    const ownIds = this.calls.all().map((c) => c.id);
    if (ownIds.length === 0) return [];
    const rate = rates().call_pstn_outgoing;
    if (rate <= 0) return [];
    const calls = callsRepo(this.db);
    const mine = await calls.answeredPstnAmong(ownIds);
    const own = new Set(mine.map((r) => r.id));
    const ended: string[] = [];
    const now = clock.now().getTime();
    for (const customerId of new Set(mine.map((r) => r.customer_id))) {
      const account = await billingAccountsRepo(this.db).getByCustomer(customerId);
      const all: LiveCharge[] = await calls.answeredPstnOf(customerId);
      const cut = callsToEnd(all, own, account?.balance_credit ?? 0, rate, now, now + this.intervalMs + MARGIN_MS);
      for (const id of cut) {
        const call = this.calls.get(id);
        if (!call) continue;
        await calls.markBalanceExhausted(id);
        this.logger.info({ call: id, customer: customerId }, 'credit guard: balance exhausted, ending the call');
        await call.hangup('balance_exhausted');
        ended.push(id);
      }
    }
    return ended;
  }
}
