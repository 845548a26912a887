/** Options of the actions that create calls. */
import { z } from 'zod';
import { address, anonymous, optionalUuid } from './common';

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
});
