/**
 * A customer's PBX settings (`pbx_settings`, migration 0939): its feature codes, stored whole; a
 * customer without a row has the defaults. A stored row missing a field (written before the field
 * existed) takes that field's default.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { DEFAULT_FEATURE_CODES, type FeatureCodes } from './feature-codes';
export type { PbxSettingsRow } from '../db/rows/pbx-settings';

export function pbxSettingsRepo(db: Db) {
  return {
    /** The customer's feature codes (the defaults where it set none). */
    async get(customerId: string): Promise<FeatureCodes> {
      const row = await db('pbx_settings').where({ customer_id: customerId }).first();
      return { ...DEFAULT_FEATURE_CODES, ...(row?.feature_codes ?? {}) };
    },
    /** Stores the customer's feature codes whole (checked by the caller: featureCodesProblem). */
    async put(customerId: string, codes: FeatureCodes): Promise<FeatureCodes> {
      const now = clock.now();
      await db('pbx_settings')
        .insert({ customer_id: customerId, feature_codes: JSON.stringify(codes), tm_create: now, tm_update: now })
        .onConflict('customer_id')
        .merge({ feature_codes: JSON.stringify(codes), tm_update: now });
      return codes;
    },
  };
}
