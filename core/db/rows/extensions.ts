/** Row types of core/repos/extensions.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { DtmfMode } from '../../calls/dtmf-mode';
import type { DigestAlgorithm } from '../../extensions/digest-algorithms';
import type { MediaEncryption } from '../../sip/media-encryption';

export interface ExtensionRow {
  id: string;
  customer_id: string;
  name: string;
  detail: string;
  extension: string;
  domain_name: string;
  username: string;
  password: string;
  direct_hash: string;
  /** Digest challenge order for this extension; null = the platform default (SIP_DIGEST_ALGORITHMS). */
  digest_algorithms: DigestAlgorithm[] | null;
  /** What the extension's media must be (core/sip/media-encryption). */
  media_encryption: MediaEncryption;
  /** The desk phone's MAC (12 lowercase hex digits, core/extensions/mac.ts), unique per customer; null: none bound. */
  mac: string | null;
  /** How the platform sends DTMF to the extension's phones (core/calls/dtmf-mode). */
  dtmf_mode: DtmfMode;
  /** The codecs of the extension's calls, in the order our offers list them (core/calls/codecs). */
  codecs: string[];
  /** The extensions (of the same customer) on the desk phone's busy lamp keys, in key order (docs/pbx.md). */
  blf_keys: string[];
  /** The pickup groups the extension belongs to (group pickup, core/pbx/; docs/pbx.md "Pickup"). */
  pickup_groups: string[];
  /** Unsolicited message-summary NOTIFYs to its contacts when its voicemail box's counts change (docs/pbx.md). */
  mwi_unsolicited: boolean;
  /** When a call to it goes to its voicemail box (docs/pbx.md "The extension's voicemail"). */
  voicemail_on: VoicemailOn;
  /** Seconds of ringing before voicemail_on.no_answer applies. */
  voicemail_timeout: number;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export interface VoicemailOn {
  no_answer: boolean;
  busy: boolean;
}

export interface ProvisioningTokenRow {
  token_hash: string;
  extension_id: string;
  customer_id: string;
  tm_expire: Date;
  tm_create: Date;
}

export interface ProvisioningCustomerSecretRow {
  customer_id: string;
  secret_hash: string;
  tm_create: Date;
}
