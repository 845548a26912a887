/** Row types of core/pbx/settings.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { FeatureCodes } from '../../pbx/feature-codes';

export interface PbxSettingsRow {
  customer_id: string;
  feature_codes: Partial<FeatureCodes>;
  tm_create: Date;
  tm_update: Date | null;
}
