/**
 * The file names desk phones append to a provisioning URL they treat as a directory, and what each
 * one is:
 * - Yealink `y0000000000xx.cfg` (common file of a model) and `{mac}.cfg` (the phone's account);
 * - Polycom `000000000000.cfg` (master file), `{mac}.cfg` (the phone's own master file) and
 *   `{mac}-phone.cfg` (its account);
 * - Grandstream `cfg{mac}.xml`; Cisco SPA/MPP `spa{mac}.xml` and `{mac}.xml`; Fanvil `{mac}.cfg`.
 * `{mac}` is 12 hex digits (phones write lowercase; either case is accepted). `{mac}.cfg` is written
 * by three families, so it needs the family from `format=` or the User-Agent.
 */
import type { PhoneFormat } from './index';
import { macOfFileName } from '../../core/extensions/mac';

export type PhoneFile =
  /** No credentials: served to any holder of the URL. */
  | { kind: 'common'; format: 'yealink' | 'polycom' }
  /** The phone's own file: needs the MAC allowed for the URL (router.ts). */
  | { kind: 'phone'; mac: string; formats: readonly PhoneFormat[] };

const MAC_CFG: readonly PhoneFormat[] = ['yealink', 'polycom', 'fanvil'];

/** What a requested file name is, or null: no phone family asks for it (404). */
export function phoneFile(name: string): PhoneFile | null {
  const n = name.toLowerCase();
  if (/^y[0-9]{12}\.cfg$/.test(n)) return { kind: 'common', format: 'yealink' };
  if (n === '000000000000.cfg') return { kind: 'common', format: 'polycom' };
  let m: RegExpExecArray | null;
  let mac: string | null;
  if ((m = /^([0-9a-f]{12})\.cfg$/.exec(n)) && (mac = macOfFileName(m[1]!))) return { kind: 'phone', mac, formats: MAC_CFG };
  if ((m = /^([0-9a-f]{12})-phone\.cfg$/.exec(n)) && (mac = macOfFileName(m[1]!))) return { kind: 'phone', mac, formats: ['polycom'] };
  if ((m = /^cfg([0-9a-f]{12})\.xml$/.exec(n)) && (mac = macOfFileName(m[1]!))) return { kind: 'phone', mac, formats: ['grandstream'] };
  if ((m = /^(?:spa)?([0-9a-f]{12})\.xml$/.exec(n)) && (mac = macOfFileName(m[1]!))) return { kind: 'phone', mac, formats: ['cisco'] };
  return null;
}
