/**
 * REFER from a phone inside one of its calls (RFC 3515): 202, then NOTIFYs carrying a sipfrag of the
 * progress (100 Trying at once, then the final status), sent beside the transfer (refer-notify.ts):
 * the target is dialled without waiting for the phone to answer any NOTIFY. Refer-To names the target;
 * with a Replaces header parameter (RFC 3891) it names the phone's other dialog instead, and the two
 * peers are joined.
 * The target: a user part on our own SIP domain is an extension of the customer, or a number (tel);
 * anything else is dialled as the SIP URI it is.
 */
import { extensionsRepo } from '../../core/repos/extensions';
import { transfersRepo } from '../../core/repos/transfers';
import type { Address } from '../../core/repos/calls';
import type { CallSession } from '../call/session';
import type { CallDeps } from '../call/deps';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { parseSipUri } from '../kit/sip-uri';
import { TRANSFER_FAIL_SIP } from '../../core/transfers/model';
import type { TransferEngine } from './engine';
import { settleTransfer } from './outcome';
import { ReferSubscription } from './refer-notify';

/** The URI inside a Refer-To header value, and its Replaces parameter (decoded), if any. */
export function parseReferTo(v: string | undefined): { uri: string; replaces: { callId: string; toTag: string; fromTag: string } | null } | null {
  if (!v) return null;
  const m = /<([^>]+)>/.exec(v) ?? /^\s*([^\s;]+)/.exec(v);
  if (!m) return null;
  const [uri, query = ''] = m[1]!.split('?');
  let replaces = null;
  for (const kv of query.split('&')) {
    const [k, val = ''] = kv.split('=');
    if (k?.toLowerCase() !== 'replaces') continue;
    let dec: string;
    try {
      dec = decodeURIComponent(val);
    } catch {
      return null;
    }
    const [callId, ...params] = dec.split(';');
    const p = (name: string) => params.find((x) => x.toLowerCase().startsWith(`${name}=`))?.split('=')[1] ?? '';
    replaces = { callId: callId!, toTag: p('to-tag'), fromTag: p('from-tag') };
  }
  return { uri: uri!, replaces };
}

async function targetAddress(deps: CallDeps, call: CallSession, uri: string): Promise<Address | null> {
  const u = parseSipUri(uri);
  if (!u) return null;
  if (u.scheme === 'tel') return { type: 'tel', target: u.user.startsWith('+') ? u.user : `+${u.user}` };
  const ours = u.host === deps.config.sipDomain.toLowerCase() || u.host.endsWith(`.${deps.config.sipDomain.toLowerCase()}`);
  if (ours && u.user) {
    const ext = await extensionsRepo(deps.db).getByExtension(call.row.customer_id, u.user);
    if (ext) return { type: 'extension', target: ext.extension };
    if (/^\+?\d{3,20}$/.test(u.user)) return { type: 'tel', target: u.user.startsWith('+') ? u.user : `+${u.user}` };
    return null;
  }
  return { type: 'sip', target: uri.replace(/^sips?:/i, '') };
}

export function referHandler(deps: CallDeps, engine: TransferEngine) {
  return (call: CallSession, req: SrfRequest, res: SrfResponse): void => {
    void handle(deps, engine, call, req, res).catch((err: Error) => {
      deps.logger.warn({ err: err.message, call: call.id }, 'REFER failed');
      if (!res.finalResponseSent) res.send(500);
    });
  };
}

async function handle(deps: CallDeps, engine: TransferEngine, call: CallSession, req: SrfRequest, res: SrfResponse): Promise<void> {
  const referTo = parseReferTo(req.get('Refer-To'));
  if (!referTo) return void res.send(400, 'Bad Refer-To');
  if (call.isEnded || call.status !== 'progressing') return void res.send(481);
  // a blind transfer to the customer's park lot parks the peer instead (media-app/pbx/)
  const pbx = engine.factory.services.pbx;
  if (!referTo.replaces && pbx && (await pbx.parkByRefer(call, referTo.uri, res))) return;
  const other = referTo.replaces ? engine.bySipCallId(referTo.replaces.callId) : undefined;
  const target = referTo.replaces ? null : await targetAddress(deps, call, referTo.uri);
  if (!referTo.replaces && !target) return void res.send(403, 'Forbidden target');
  const t = await transfersRepo(deps.db).create({
    customer_id: call.row.customer_id,
    type: referTo.replaces ? 'attended' : 'blind',
    transferer_call_id: call.id,
    transferee_addresses: target ? [target] : other ? [other.row.direction === 'incoming' ? other.row.source : other.row.destination] : [],
    source: 'refer',
  });
  res.send(202);
  // RFC 3515: the first NOTIFY goes at once; it and the later ones run beside the transfer
  const sub = new ReferSubscription(call, deps.logger, t.id);
  sub.report(100, 'Trying');
  if (referTo.replaces) {
    if (!other || other === call || other.row.customer_id !== call.row.customer_id) {
      const [status, phrase] = TRANSFER_FAIL_SIP.replaces_not_found;
      sub.report(status, phrase);
      await settleTransfer(engine.factory, t, { status: 'failed', reason: 'replaces_not_found' }, [call]);
      return;
    }
    await engine.replaces(t, other, sub);
    return;
  }
  await engine.execute(t, sub);
}
