/** Row types of core/repos/outbound-registrations.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export type RegistrationOwner = 'provider' | 'trunk';

export type RegistrationState = 'unregistered' | 'registering' | 'registered' | 'failed';

export type RegistrationTransport = 'udp' | 'tcp';

export interface OutboundRegistrationRow {
  id: string;
  owner_type: RegistrationOwner;
  owner_id: string;
  customer_id: string | null;
  registrar: string;
  domain: string;
  username: string;
  password: string;
  expires: number;
  transport: RegistrationTransport;
  contact_user: string;
  state: RegistrationState;
  expires_at: Date | null;
  last_error: string;
  tm_create: Date;
  tm_update: Date | null;
}
