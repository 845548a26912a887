/**
 * The account a provisioning document configures: the extension's credentials and registration
 * domain, and where the phone sends SIP (core/extensions/sip-target.ts: an outbound proxy, the SIP
 * server's advertised address by default, or none with PROVISIONING_WILDCARD_DNS=true).
 */
import type { ExtensionRow } from '../../core/repos/extensions';
import type { SipTarget } from '../../core/extensions/sip-target';
import type { ProvisioningAccount } from './account';

export function accountFor(ext: ExtensionRow, target: SipTarget): ProvisioningAccount {
  return {
    username: ext.username,
    password: ext.password,
    domain: ext.domain_name,
    displayName: ext.name,
    proxyHost: target.proxyHost ?? ext.domain_name,
    proxyPort: target.proxyPort,
    transport: target.transport,
    expires: 3600,
  };
}
