/**
 * What a provisioning URL answers for one fetch: the extension's account in the phone's format, a
 * file of a directory fetch (files.ts), or why not. Credentials go only into the files of a MAC the
 * URL may serve: under a token URL, the token's extension unless it is bound to another MAC (or the
 * MAC to another extension); under a customer URL, the extension the MAC is bound to.
 */
import type { Db } from '../../core/db/knex';
import type { SipTarget } from '../../core/extensions/sip-target';
import { extensionsRepo, type ExtensionRow } from '../../core/repos/extensions';
import { PHONE_FORMATS, formatFromUserAgent, renderConfig, type PhoneFormat, type RenderedConfig } from './index';
import { phoneFile } from './files';
import { renderPolycomMaster, renderYealinkCommon } from './common';
import { accountFor } from './target';
import { hostOfRequest } from './request-host';

export interface Fetch {
  /** The token's extension (token URL), or null (customer URL). */
  tokenExtension: ExtensionRow | null;
  customerId: string;
  /** The file name appended to the URL; null: the token URL itself. */
  file: string | null;
  /** The valid `format=` parameter, if any. */
  format: PhoneFormat | undefined;
  userAgent: string | undefined;
  hostHeader: string | undefined;
}

export type Answer = { ok: true; doc: RenderedConfig; format: PhoneFormat; extensionId: string | null; credentials: boolean } | { ok: false; http: 400 | 404; message: string };

const FORMAT_LIST = PHONE_FORMATS.join(', ');
const notFound = (message: string): Answer => ({ ok: false, http: 404, message });

export async function answerFetch(db: Db, target: SipTarget, f: Fetch): Promise<Answer> {
  const requested = f.format ?? formatFromUserAgent(f.userAgent);
  if (f.file === null) {
    if (!f.tokenExtension) return notFound('no such provisioning file');
    if (!requested) return unknownPhone();
    return account(f.tokenExtension, requested, target, f.hostHeader);
  }
  const pf = phoneFile(f.file);
  if (!pf) return notFound('no such provisioning file');
  if (pf.kind === 'common') {
    const doc = pf.format === 'yealink' ? renderYealinkCommon() : renderPolycomMaster(null);
    return { ok: true, doc, format: pf.format, extensionId: null, credentials: false };
  }
  let format: PhoneFormat;
  if (pf.formats.length === 1) format = pf.formats[0]!;
  else if (!requested) return unknownPhone(`${f.file} is asked for by ${pf.formats.join(', ')}: `);
  else if (!pf.formats.includes(requested)) return notFound(`no such provisioning file for ${requested}`);
  else format = requested;
  const ext = await extensionForMac(db, f, pf.mac);
  if (!ext) return notFound('no extension is bound to this MAC');
  if (format === 'polycom' && !/-phone\.cfg$/i.test(f.file)) {
    return { ok: true, doc: renderPolycomMaster(pf.mac), format, extensionId: ext.id, credentials: false };
  }
  return account(ext, format, target, f.hostHeader);
}

function unknownPhone(prefix = ''): Answer {
  return {
    ok: false,
    http: 400,
    message: `${prefix}the User-Agent names no supported phone; add format= (one of ${FORMAT_LIST}) to the provisioning URL`,
  };
}

async function extensionForMac(db: Db, f: Fetch, mac: string): Promise<ExtensionRow | null> {
  const bound = await extensionsRepo(db).getByMac(f.customerId, mac);
  const ext = f.tokenExtension;
  if (!ext) return bound;
  if (ext.mac ? ext.mac !== mac : bound !== null && bound.id !== ext.id) return null;
  return ext;
}

function account(ext: ExtensionRow, format: PhoneFormat, target: SipTarget, hostHeader: string | undefined): Answer {
  let host: string | undefined;
  if (target.proxyFromRequest) {
    host = hostOfRequest(hostHeader) ?? undefined;
    if (!host) {
      return { ok: false, http: 400, message: 'the Host header is not a host name or IP address (it names the outbound proxy while SIP_ADVERTISED_HOST is unset)' };
    }
  }
  return { ok: true, doc: renderConfig(format, accountFor(ext, target, host)), format, extensionId: ext.id, credentials: true };
}
