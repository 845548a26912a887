/**
 * The files of a directory fetch that carry no credentials: Yealink's common file of a model, and
 * Polycom's master files (`000000000000.cfg` and `{mac}.cfg`), which name the file holding the
 * phone's account (`[PHONE_MAC_ADDRESS]-phone.cfg`, or the MAC itself).
 */
import type { RenderedConfig } from './account';
import { xmlEscape as x } from './xml';

/** Yealink `y0000000000xx.cfg`: the version header alone (the account comes in `{mac}.cfg`). */
export function renderYealinkCommon(): RenderedConfig {
  return { contentType: 'text/plain; charset=utf-8', body: '#!version:1.0.0.1\n', filename: 'y000000000000.cfg' };
}

/** Polycom master file; `mac` null: the common `000000000000.cfg` (the phone substitutes its MAC). */
export function renderPolycomMaster(mac: string | null): RenderedConfig {
  const phoneFile = `${mac ?? '[PHONE_MAC_ADDRESS]'}-phone.cfg`;
  const body = [
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
    `<APPLICATION APP_FILE_PATH="" CONFIG_FILES="${x(phoneFile)}" MISC_FILES="" LOG_FILE_DIRECTORY="" OVERRIDES_DIRECTORY="" CONTACTS_DIRECTORY="" LICENSE_DIRECTORY="" />`,
    '',
  ].join('\n');
  return { contentType: 'application/xml; charset=utf-8', body, filename: mac ? `${mac}.cfg` : '000000000000.cfg' };
}
