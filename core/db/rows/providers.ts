/** Row types of core/repos/providers.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { MediaEncryption } from '../../sip/media-encryption';

export interface ProviderRow {
  id: string;
  type: 'sip';
  hostname: string;
  tech_prefix: string;
  tech_postfix: string;
  tech_headers: Record<string, string>;
  transport: 'udp' | 'tcp' | 'tls';
  auth_username: string;
  auth_password: string;
  /** The codecs of calls to and from the provider, in the order our offers list them (core/calls/codecs). */
  codecs: string[];
  /** What the provider's media must be (core/sip/media-encryption). */
  media_encryption: MediaEncryption;
  name: string;
  detail: string;
  metadata: Record<string, unknown>;
  health_status: 'unknown' | 'healthy' | 'unhealthy';
  health_checked_at: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
