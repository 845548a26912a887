/** Row types of core/repos/campaigncalls.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { Outcome } from '../../campaigns/dialplan';
import type { CampaigncallReferenceType, CampaigncallResult, CampaigncallStatus } from '../../campaigns/model';
import type { Address } from '../../address';

export interface CampaigncallRow {
  id: string;
  customer_id: string;
  campaign_id: string;
  outplan_id: string;
  outdial_id: string;
  outdial_target_id: string;
  queue_id: string;
  activeflow_id: string;
  flow_id: string;
  reference_type: CampaigncallReferenceType;
  reference_id: string;
  status: CampaigncallStatus;
  result: CampaigncallResult;
  source: Address;
  destination: Address;
  destination_index: number;
  try_count: number;
  /** what the attempt ended with (core/campaigns/dialplan.ts Outcome); '' while live */
  result_reason: Outcome;
  /** the AMD verdict (human, machine, notsure) when the campaign dials with AMD */
  amd_result: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
