/**
 * Snom XML settings (D7xx/D8xx): <settings><phone-settings> with the user_* settings of identity 1;
 * perm="" leaves them editable on the phone.
 */
import { type ProvisioningAccount, type RenderedConfig, hostPort } from './account';
import { xmlEscape as x } from './xml';

export function renderSnom(a: ProvisioningAccount): RenderedConfig {
  const s: [string, string | number][] = [
    ['user_active', 'on'],
    ['user_realname', a.displayName || a.username],
    ['user_name', a.username],
    ['user_pname', a.username],
    ['user_pass', a.password],
    ['user_host', a.domain],
    ['user_outbound', `${hostPort(a)};transport=${a.transport}`],
    ['user_expiry', a.expires],
  ];
  const body = [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<settings>',
    '  <phone-settings e="2">',
    ...s.map(([k, v]) => `    <${k} idx="1" perm="">${x(String(v))}</${k}>`),
    '  </phone-settings>',
    '</settings>',
    '',
  ].join('\n');
  return { contentType: 'application/xml; charset=utf-8', body, filename: 'snom.xml' };
}
