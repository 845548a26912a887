/**
 * Linphone remote provisioning (lpconfig XML), the form of the VoIPbin addendum
 * (provisioning_extension.yaml): proxy_0 and auth_info_0 sections, every entry overwrite="true",
 * `transient_provisioning` so the app does not keep re-fetching a URL that expires in 10 minutes.
 * With an outbound proxy, reg_proxy names it (liblinphone sends every request there; tested with
 * linphonec 5.1, which ignores reg_route for REGISTER and resolves reg_proxy) and reg_route repeats it
 * (the apps' "outbound proxy" switch); the REGISTER's Request-URI, To and realm come from
 * reg_identity's domain, the registration domain that names the customer.
 */
import { type ProvisioningAccount, type RenderedConfig, hostPort, usesOutboundProxy } from './account';
import { xmlEscape as x } from './xml';

export function renderLinphone(a: ProvisioningAccount): RenderedConfig {
  const entry = (name: string, value: string | number) => `    <entry name="${name}" overwrite="true">${x(String(value))}</entry>`;
  const body = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<config xmlns="http://www.linphone.org/xsds/lpconfig.xsd">',
    '  <section name="misc">',
    entry('transient_provisioning', 1),
    '  </section>',
    '  <section name="proxy_0">',
    ...(usesOutboundProxy(a)
      ? [entry('reg_proxy', `<sip:${hostPort(a)};transport=${a.transport}>`), entry('reg_route', `<sip:${hostPort(a)};transport=${a.transport};lr>`)]
      : [entry('reg_proxy', `<sip:${hostPort(a)};transport=${a.transport}>`)]),
    entry('reg_identity', `sip:${a.username}@${a.domain}`),
    entry('reg_expires', a.expires),
    entry('reg_sendregister', 1),
    entry('publish', 0),
    '  </section>',
    '  <section name="auth_info_0">',
    entry('username', a.username),
    entry('domain', a.domain),
    entry('passwd', a.password),
    entry('realm', a.domain),
    '  </section>',
    '</config>',
    '',
  ].join('\n');
  return { contentType: 'application/xml; charset=utf-8', body, filename: 'linphone.xml' };
}
