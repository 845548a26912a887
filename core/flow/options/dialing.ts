/** Options of the actions that create calls. */
import { z } from 'zod';
import { address, anonymous, holdMusic, optionalUuid } from './common';

export const call = z.object({
  source: address.optional(),
  destinations: z.array(address).min(1, 'must contain at least one destination'),
  flow_id: optionalUuid,
  /** Validated as a flow of its own (own id space) by validateActions. */
  actions: z.array(z.unknown()).optional(),
  chained: z.boolean().optional(),
  early_execution: z.boolean().optional(),
  anonymous,
});

export const connect = z.object({
  source: address.optional(),
  destinations: z.array(address).min(1, 'must contain at least one destination'),
  early_media: z.boolean().optional(),
  relay_reason: z.boolean().optional(),
  anonymous,
  /** Ms the destinations ring before they are given up (no-answer); default the node's dial timeout. */
  ring_timeout: z.number().int('must be an integer').min(1000, 'must be >= 1000').max(600_000, 'must be <= 600000').optional(),
  /** Records the master call (both directions mixed) from the answer to the bridge's end; svc.connect.recording_id. */
  record: z.boolean().optional(),
  /** A * from the master's side ends the bridge (the destination is hung up) and the flow goes on. */
  hangup_on_star: z.boolean().optional(),
  /** Ms the bridge may last after the answer; then the destination is hung up and the flow goes on. */
  duration_limit: z.number().int('must be an integer').min(1000, 'must be >= 1000').max(86_400_000, 'must be <= 86400000').optional(),
  /** The music either side hears while the other holds it, or while it is held through the API without its own music. */
  hold_music: holdMusic.optional(),
});
