/**
 * The account a provisioning document configures: the extension's credentials and registration
 * domain, and where the phone sends SIP (core/extensions/sip-target.ts: an outbound proxy, the SIP
 * server's advertised address, the host the phone fetched the document from when none is set, or
 * none with PROVISIONING_WILDCARD_DNS=true).
 */
import type { ExtensionRow } from '../../core/repos/extensions';
import type { SipTarget } from '../../core/extensions/sip-target';
import type { ProvisioningAccount } from './account';

/** `requestHost`: the validated host of the request (request-host.ts); needed when the target says proxyFromRequest. */
export function accountFor(ext: ExtensionRow, target: SipTarget, requestHost?: string): ProvisioningAccount {
  let proxyHost = target.proxyHost ?? ext.domain_name;
  if (target.proxyFromRequest) {
    if (!requestHost) throw new Error('the outbound proxy is the request host, and none was given');
    proxyHost = requestHost;
  }
  return {
    username: ext.username,
    password: ext.password,
    domain: ext.domain_name,
    displayName: ext.name,
    proxyHost,
    proxyPort: target.proxyPort,
    transport: target.transport,
    expires: 3600,
    mac: ext.mac ?? null,
    blfKeys: ext.blf_keys ?? [],
  };
}
