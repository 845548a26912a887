/**
 * One outbound registration kept alive: REGISTER, refresh at 50-80 % of the granted expiry, retry
 * after a failure with capped exponential backoff (with jitter), REGISTER with expiry 0 on stop.
 * Its state changes only through `move()` (the one transition function, checked against MOVES) and
 * each change is reported once through `onStatus`.
 */
import { randomBytes } from 'node:crypto';
import type { OutboundRegistrationRow, RegistrationState, RegistrationStatus } from '../../core/repos/outbound-registrations';
import { register, type RegisterOutcome, type RegisterTarget } from './exchange';
import type { Srf } from '../kit/srf';

export type RegistrationEvent = 'attempt' | 'ok' | 'fail' | 'stop';

/** state × event → next state; a missing entry is a refused move. */
const MOVES: Record<RegistrationState, Partial<Record<RegistrationEvent, RegistrationState>>> = {
  unregistered: { attempt: 'registering', stop: 'unregistered' },
  registering: { ok: 'registered', fail: 'failed', stop: 'unregistered' },
  // a refresh keeps the state: the binding holds until it expires
  registered: { attempt: 'registered', ok: 'registered', fail: 'failed', stop: 'unregistered' },
  failed: { attempt: 'registering', stop: 'unregistered' },
};

export function nextState(s: RegistrationState, e: RegistrationEvent): RegistrationState {
  const to = MOVES[s][e];
  if (!to) throw new Error(`registration: ${e} not allowed in ${s}`);
  return to;
}

export interface RegistrationTiming {
  /** The first retry's delay; doubled per failure up to retryMaxMs. */
  retryMinMs: number;
  retryMaxMs: number;
  /** One REGISTER exchange is given up (as 408) after this long. */
  timeoutMs: number;
}

export interface RegistrationDeps {
  srf: Srf;
  timing: RegistrationTiming;
  /** Where to send and what to say, worked out before each attempt (a refusal: why, as last_error). */
  target(row: OutboundRegistrationRow): Promise<{ proxy: string; uri: string; aor: string; contact: string } | { refused: string }>;
  /** Every change of what is shown; `notable`: the state or last_error changed (an event is due). */
  onStatus(row: OutboundRegistrationRow, status: RegistrationStatus, notable: boolean): Promise<void>;
  onError(err: Error): void;
}

/** Delay before the next refresh: a random point between 50 % and 80 % of the granted expiry. */
export function refreshDelayMs(grantedSec: number, rand = Math.random): number {
  return Math.max(1000, Math.round(grantedSec * 1000 * (0.5 + 0.3 * rand())));
}

/** Delay before retry number `failures` (1, 2, ...): min · 2^(n-1), capped, ±20 % jitter (never above the cap). */
export function retryDelayMs(failures: number, t: Pick<RegistrationTiming, 'retryMinMs' | 'retryMaxMs'>, rand = Math.random): number {
  const base = Math.min(t.retryMaxMs, t.retryMinMs * 2 ** Math.min(30, Math.max(0, failures - 1)));
  return Math.min(t.retryMaxMs, Math.round(base * (0.8 + 0.4 * rand())));
}

export function lastErrorOf(o: Extract<RegisterOutcome, { ok: false }>): string {
  return o.status === 408 ? 'SIP 408: no answer from the registrar' : `SIP ${o.status}`;
}

export class Registration {
  private state: RegistrationState = 'unregistered';
  private status: RegistrationStatus = { state: 'unregistered', expires_at: null, last_error: '' };
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private seq = 1;
  private stopped = false;
  private busy: Promise<void> = Promise.resolve();
  private readonly callId = `${randomBytes(12).toString('hex')}@outreg`;
  private readonly fromTag = randomBytes(6).toString('hex');

  constructor(
    readonly row: OutboundRegistrationRow,
    private readonly deps: RegistrationDeps,
  ) {}

  start(): void {
    this.schedule(0);
  }

  /** Stops refreshing; with `unregister`, removes the binding (expiry 0) first. Writes unregistered. */
  async stop(unregister: boolean): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.busy;
    if (unregister && this.state === 'registered') {
      const t = await this.target().catch(() => null);
      if (t && !('refused' in t)) await register(this.deps.srf, t, () => this.seq++, 0, this.deps.timing.timeoutMs).catch(() => undefined);
    }
    await this.report('stop', { expires_at: null, last_error: this.status.last_error });
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.busy = this.attempt().catch((err: Error) => this.deps.onError(err));
    }, ms);
    this.timer.unref();
  }

  private async target(): Promise<RegisterTarget | { refused: string }> {
    const t = await this.deps.target(this.row);
    if ('refused' in t) return t;
    return { ...t, contactUser: this.row.contact_user, username: this.row.username, password: this.row.password, callId: this.callId, fromTag: this.fromTag };
  }

  private async attempt(): Promise<void> {
    if (this.stopped) return;
    await this.report('attempt', this.status);
    let outcome: RegisterOutcome;
    try {
      const t = await this.target();
      outcome = 'refused' in t ? { ok: false, status: 0, reason: t.refused } : await register(this.deps.srf, t, () => this.seq++, this.row.expires, this.deps.timing.timeoutMs);
    } catch (err) {
      // not the registrar's answer (a DNS or sip-server problem): a failure like any other, retried
      this.deps.onError(err as Error);
      outcome = { ok: false, status: 0, reason: 'REGISTER not sent' };
    }
    if (this.stopped) return;
    if (outcome.ok && outcome.grantedSec > 0) {
      this.failures = 0;
      await this.report('ok', { expires_at: new Date(Date.now() + outcome.grantedSec * 1000), last_error: '' });
      this.schedule(refreshDelayMs(outcome.grantedSec));
      return;
    }
    this.failures++;
    const lastError = outcome.ok ? 'SIP 200 without a binding' : outcome.status === 0 ? outcome.reason : lastErrorOf(outcome);
    await this.report('fail', { expires_at: null, last_error: lastError });
    this.schedule(retryDelayMs(this.failures, this.deps.timing));
  }

  /** The one place the state moves; reported when anything shown changed. */
  private async report(e: RegistrationEvent, st: Omit<RegistrationStatus, 'state'>): Promise<void> {
    const to = nextState(this.state, e);
    const next: RegistrationStatus = { state: to, expires_at: st.expires_at, last_error: st.last_error };
    const notable = to !== this.status.state || next.last_error !== this.status.last_error;
    const changed = notable || next.expires_at?.getTime() !== this.status.expires_at?.getTime();
    this.state = to;
    this.status = next;
    // a failed write (database away) does not stop the registration: the next change writes again
    if (changed) await this.deps.onStatus(this.row, next, notable).catch((err: Error) => this.deps.onError(err));
  }
}
