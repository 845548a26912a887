/**
 * Snom XML settings (D7xx/D8xx): <settings><phone-settings> with the user_* settings of identity 1;
 * perm="" leaves them editable on the phone. BLF keys are <functionKeys> fkey idx 0.. in order, each
 * `blf <sip:{extension}@{domain}>` on identity 1 (context="1").
 */
import { type ProvisioningAccount, type RenderedConfig, blfUri, hostPort } from './account';
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
    ...((a.blfKeys ?? []).length
      ? ['  <functionKeys e="2">', ...(a.blfKeys ?? []).map((key, i) => `    <fkey idx="${i}" context="1" perm="">${x(`blf <${blfUri(a, key)}>`)}</fkey>`), '  </functionKeys>']
      : []),
    '</settings>',
    '',
  ].join('\n');
  return { contentType: 'application/xml; charset=utf-8', body, filename: 'snom.xml' };
}
