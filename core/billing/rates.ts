/**
 * Prices, in micros (1 USD = 1,000,000), per cost type: per minute for calls, per item otherwise.
 * Override any of them with BILLING_RATE_<COST_TYPE> (e.g. BILLING_RATE_CALL_PSTN_OUTGOING=20000).
 * BILLING_INITIAL_CREDIT (micros, default 0) is what a new billing account starts with.
 */
import type { CostType } from '../repos/billings';

export const DEFAULT_RATES: Record<Exclude<CostType, ''>, number> = {
  call_pstn_outgoing: 20_000,
  call_pstn_incoming: 10_000,
  call_vn: 0,
  call_extension: 0,
  call_direct_ext: 0,
  sms: 10_000,
  email: 1_000,
  number: 1_000_000,
  number_renew: 1_000_000,
  tts: 0,
  recording: 0,
};

export type Rates = Record<Exclude<CostType, ''>, number>;

export function loadRates(env: NodeJS.ProcessEnv = process.env): Rates {
  const rates = { ...DEFAULT_RATES };
  for (const key of Object.keys(rates) as (keyof Rates)[]) {
    const raw = env[`BILLING_RATE_${key.toUpperCase()}`];
    if (raw === undefined || raw === '') continue;
    if (!/^\d{1,12}$/.test(raw)) throw new Error(`BILLING_RATE_${key.toUpperCase()} must be a whole number of micros (got ${JSON.stringify(raw)})`);
    rates[key] = Number(raw);
  }
  return rates;
}

export function initialCredit(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.BILLING_INITIAL_CREDIT;
  if (raw === undefined || raw === '') return 0;
  if (!/^\d{1,15}$/.test(raw)) throw new Error(`BILLING_INITIAL_CREDIT must be a whole number of micros (got ${JSON.stringify(raw)})`);
  return Number(raw);
}

let current: Rates | null = null;
/** The process-wide rates, read from the environment once. */
export function rates(): Rates {
  current ??= loadRates();
  return current;
}
/** Tests and operators may replace them at run time. */
export function setRates(r: Partial<Rates> | null): void {
  current = r === null ? null : { ...rates(), ...r };
}
