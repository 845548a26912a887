/**
 * Unsolicited MWI (RFC 3842 without a subscription, as desk phones configured for it expect): on
 * each MWI notice (core/voicemail/mwi.ts) for a box of an extension with `mwi_unsolicited`, one node
 * (a Redis claim per notice) sends `NOTIFY Event: message-summary` to each registered contact of the
 * extension. The subscribed form (SUBSCRIBE/NOTIFY framework) plugs into the same notice.
 *
 * A phone gets one NOTIFY per change: a contact whose phone holds a live message-summary subscription
 * to this box (by the extension's name or the box number, on any node: core/presence/watchers.ts) is
 * served by that subscription and left out here. The phone is the same when the registered contact and
 * the SUBSCRIBE's Contact share host and port (the user part may differ, as baresip's does).
 */
import type { Logger } from 'pino';
import { extensionsRepo } from '../../core/repos/extensions';
import { messageSummaryBody, mwiChannel, parseMwiNotice, type MwiNotice } from '../../core/voicemail/mwi';
import { WatcherIndex } from '../../core/presence/watchers';
import type { CallDeps } from '../call/deps';
import { targetsFor } from '../outbound/targets';
import { parseSipUri } from '../kit/sip-uri';
import { resourcesOf } from './mwi-presence';

interface SentRequest {
  on(event: 'response', fn: (res: { status: number }) => void): void;
}
type RequestSender = { request(uri: string, opts: object, cb: (err: Error | null, r: SentRequest) => void): void };

/** How long one NOTIFY may wait for its final response. */
const NOTIFY_TIMEOUT_MS = 8000;

function sendNotify(deps: CallDeps, uri: string, proxy: string | undefined, headers: Record<string, string>, body: string): Promise<number> {
  const srf = deps.srf as unknown as RequestSender;
  return new Promise<number>((resolve) => {
    const t = setTimeout(() => resolve(408), NOTIFY_TIMEOUT_MS);
    srf.request(uri, { method: 'NOTIFY', proxy, headers, body }, (err, sent) => {
      if (err) {
        clearTimeout(t);
        return resolve(503);
      }
      sent.on('response', (r) => {
        if (r.status < 200) return;
        clearTimeout(t);
        resolve(r.status);
      });
    });
  });
}

/** `host:port` of a SIP URI (5060, or 5061 for sips, when it names none); '' when it is none. */
function hostPort(uri: string): string {
  const u = parseSipUri(uri);
  if (!u || u.scheme === 'tel') return '';
  return `${u.host}:${u.port ?? (u.scheme === 'sips' ? 5061 : 5060)}`;
}

/** host:port of the extension's phones that a live message-summary subscription to the notice's box serves. */
async function subscribedPhones(deps: CallDeps, notice: MwiNotice, extensionId: string): Promise<Set<string>> {
  const index = new WatcherIndex(deps.redis, deps.config.redisKeyPrefix);
  const served = new Set<string>();
  for (const name of await resourcesOf(deps.db, notice)) {
    for (const w of await index.live({ customerId: notice.customer_id, event: 'message-summary', name })) {
      if (w.owner === extensionId && hostPort(w.contact)) served.add(hostPort(w.contact));
    }
  }
  return served;
}

/** Sends the notice's summary to the extension's contacts that no subscription serves; the statuses, or null when it does not apply. */
export async function notifyExtension(deps: CallDeps, notice: MwiNotice): Promise<number[] | null> {
  if (!notice.extension_id) return null;
  const ext = await extensionsRepo(deps.db).getOwned(notice.customer_id, notice.extension_id);
  if (!ext || !ext.mwi_unsolicited) return null;
  const served = await subscribedPhones(deps, notice, ext.id);
  const targets = (await targetsFor(deps, notice.customer_id, { type: 'extension', target: ext.extension })).filter((t) => !served.has(hostPort(t.uri)));
  const account = `sip:${ext.username}@${ext.domain_name}`;
  const body = messageSummaryBody(notice.summary, account);
  const headers = {
    From: `<${account}>`,
    To: `<${account}>`,
    Event: 'message-summary',
    'Subscription-State': 'active',
    'Content-Type': 'application/simple-message-summary',
  };
  return Promise.all(targets.map((t) => sendNotify(deps, t.uri, t.proxy, headers, body)));
}

export async function startMwiNotifier(deps: CallDeps, logger: Logger): Promise<{ stop(): Promise<void> }> {
  const prefix = deps.config.redisKeyPrefix;
  const sub = deps.redis.duplicate();
  sub.on('error', (err: Error) => logger.debug({ err: err.message }, 'mwi subscriber'));
  const running = new Set<Promise<unknown>>();
  sub.on('message', (_channel: string, message: string) => {
    const notice = parseMwiNotice(message);
    if (!notice?.extension_id) return;
    const p = (async () => {
      // one node sends each notice
      const claim = await deps.redis.set(`${prefix}mwi-claim:${notice.id}`, '1', 'EX', 60, 'NX');
      if (claim !== 'OK') return;
      const statuses = await notifyExtension(deps, notice);
      if (statuses) logger.debug({ box: notice.box_id, statuses }, 'unsolicited MWI sent');
    })()
      .catch((err: Error) => logger.warn({ err: err.message, box: notice.box_id }, 'unsolicited MWI failed'))
      .finally(() => running.delete(p));
    running.add(p);
  });
  await sub.subscribe(mwiChannel(prefix)).catch((err: Error) => logger.warn({ err: err.message }, 'no MWI channel: unsolicited NOTIFYs are not sent'));
  return {
    async stop() {
      sub.disconnect();
      await Promise.allSettled([...running]);
    },
  };
}
