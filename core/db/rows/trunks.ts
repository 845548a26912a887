/** Row types of core/repos/trunks.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { DtmfMode } from '../../calls/dtmf-mode';
import type { MediaEncryption } from '../../sip/media-encryption';

export type TrunkAuthType = 'basic' | 'ip';

export interface TrunkRow {
  id: string;
  customer_id: string;
  name: string;
  detail: string;
  domain_name: string;
  auth_types: TrunkAuthType[];
  username: string;
  password: string;
  allowed_ips: string[];
  /** What the trunk's media must be (none: plain RTP; an SRTP offer is still taken through rtpengine). */
  media_encryption: MediaEncryption;
  /** How the platform sends DTMF on the trunk's calls (core/calls/dtmf-mode). */
  dtmf_mode: DtmfMode;
  /** The codecs of the trunk's calls, in the order our offers list them (core/calls/codecs). */
  codecs: string[];
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
