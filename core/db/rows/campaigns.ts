/** Row types of core/repos/campaigns.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { CampaignStatus, CampaignType, EndHandle } from '../../campaigns/model';
import type { Action } from '../../flow';

export interface CampaignRow {
  id: string;
  customer_id: string;
  type: CampaignType;
  name: string;
  detail: string;
  status: CampaignStatus;
  service_level: number;
  end_handle: EndHandle;
  actions: Action[];
  flow_id: string;
  outplan_id: string;
  outdial_id: string;
  queue_id: string;
  next_campaign_id: string;
  /** the amd action's options every attempt is placed with; null = no AMD */
  amd: CampaignAmd | null;
  /** attempts started per minute at most; 0 = no limit */
  dial_rate: number;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export type CampaignAmd = Record<string, unknown>;
