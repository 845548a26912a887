// A SIP provider row (a carrier's gateway, often sipp on a loopback port) as the outbound suites make
// them: UDP, no prefixes, headers or credentials, the default codecs.
import type { Knex } from '../core/db/knex';
import { providersRepo, type ProviderFields } from '../core/repos/providers';

/** A provider at `hostname` named `name`; `more` adds to or overrides the plain fields. */
export function sipProvider(db: Knex, hostname: string, name: string, more: Partial<ProviderFields> = {}) {
  return providersRepo(db).create({
    type: 'sip',
    hostname,
    tech_prefix: '',
    tech_postfix: '',
    tech_headers: {},
    transport: 'udp',
    auth_username: '',
    auth_password: '',
    codecs: '',
    name,
    detail: '',
    ...more,
  });
}
