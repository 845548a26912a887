/**
 * How many attempts a campaign may start now (pure; the runner gathers the counts).
 *
 * - Without a queue (`fixed`): `service_level` is the most campaigncalls live at once.
 * - With a queue (`agents`): `service_level` is a percentage of the queue's available agents (VoIPbin's
 *   reading): at most floor(available × service_level / 100) attempts may be waiting for an agent at
 *   once (dialling, or answered and not yet with an agent). 100 = one per free agent; 150 over-dials.
 * - `dial_rate` (attempts per minute, 0 = no limit) spaces attempts evenly in both modes: the next
 *   one starts no sooner than 60000 / dial_rate ms after the last.
 */
export interface PacingInput {
  serviceLevel: number;
  /** campaigncalls dialing or progressing */
  live: number;
  /** agents mode only: the queue's available agents, and live attempts not yet with an agent */
  agents?: { available: number; waiting: number };
  dialRate: number;
  /** ms since the campaign's last attempt started (Infinity when none) */
  sinceLastDialMs: number;
}

export interface Pacing {
  /** attempts that may start now */
  budget: number;
  /** why no more (for logs and docs) */
  limit: 'service_level' | 'agents' | 'dial_rate' | 'none';
}

export function rateSpacingMs(dialRate: number): number {
  return dialRate > 0 ? Math.ceil(60_000 / dialRate) : 0;
}

export function pacing(p: PacingInput): Pacing {
  let budget: number;
  let limit: Pacing['limit'];
  if (p.agents) {
    budget = Math.floor((p.agents.available * p.serviceLevel) / 100) - p.agents.waiting;
    limit = 'agents';
  } else {
    budget = p.serviceLevel - p.live;
    limit = 'service_level';
  }
  if (p.dialRate > 0) {
    const allowed = p.sinceLastDialMs >= rateSpacingMs(p.dialRate) ? 1 : 0;
    if (allowed < budget) {
      budget = allowed;
      limit = 'dial_rate';
    }
  }
  return { budget: Math.max(0, budget), limit: budget > 0 ? 'none' : limit };
}
