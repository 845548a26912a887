/**
 * Message-waiting state of a box (RFC 3842's message-summary): `mailboxSummary` counts it, and every
 * write that changes the counts publishes a change notice on the Redis channel `<prefix>pbx:mwi`.
 * A NOTIFY sender (unsolicited here: media-app/voicemail/mwi-notifier.ts; the subscribed form on the
 * SUBSCRIBE framework) subscribes to the channel and re-reads the summary of the box it names.
 */
import type { Redis } from 'ioredis';
import type { Db } from '../db/knex';
import { newId } from '../ids';

export interface MailboxSummary {
  newCount: number;
  oldCount: number;
  urgentNew: number;
  urgentOld: number;
}

/** What the channel carries: the box whose counts changed and the counts after the change. */
export interface MwiNotice {
  /** Unique per notice: one node of several claims it (the unsolicited NOTIFY is sent once). */
  id: string;
  customer_id: string;
  box_id: string;
  /** The box's extension ('' for a free-standing box). */
  extension_id: string;
  summary: MailboxSummary;
}

export const mwiChannel = (keyPrefix: string): string => `${keyPrefix}pbx:mwi`;

export async function mailboxSummary(db: Db, boxId: string): Promise<MailboxSummary> {
  const rows = (await db('voicemail_messages')
    .whereNull('tm_delete')
    .where({ box_id: boxId })
    .groupBy('folder')
    .select('folder')
    .count<{ folder: string; n: string; u: string }[]>('* as n')
    .select(db.raw('count(*) filter (where urgent) as u'))) as { folder: string; n: string; u: string }[];
  const s: MailboxSummary = { newCount: 0, oldCount: 0, urgentNew: 0, urgentOld: 0 };
  for (const r of rows) {
    if (r.folder === 'new') {
      s.newCount = Number(r.n);
      s.urgentNew = Number(r.u);
    } else if (r.folder === 'old') {
      s.oldCount = Number(r.n);
      s.urgentOld = Number(r.u);
    }
  }
  return s;
}

/** Counts the box again and publishes the notice; never throws (the lamp is refreshed on the next change or refresh). */
export async function publishMwiChange(db: Db, redis: Redis, keyPrefix: string, box: { id: string; customer_id: string; extension_id: string | null }): Promise<MwiNotice | null> {
  try {
    const notice: MwiNotice = { id: newId(), customer_id: box.customer_id, box_id: box.id, extension_id: box.extension_id ?? '', summary: await mailboxSummary(db, box.id) };
    await redis.publish(mwiChannel(keyPrefix), JSON.stringify(notice));
    return notice;
  } catch {
    return null;
  }
}

/** Parses a message of the channel; null when it is not a notice. */
export function parseMwiNotice(message: string): MwiNotice | null {
  try {
    const m = JSON.parse(message) as Partial<MwiNotice>;
    const s = m.summary;
    if (typeof m.id !== 'string' || typeof m.box_id !== 'string' || typeof m.customer_id !== 'string' || typeof m.extension_id !== 'string' || !s) return null;
    if (![s.newCount, s.oldCount, s.urgentNew, s.urgentOld].every((n) => Number.isInteger(n) && n >= 0)) return null;
    return { id: m.id, customer_id: m.customer_id, box_id: m.box_id, extension_id: m.extension_id, summary: s };
  } catch {
    return null;
  }
}

/** The RFC 3842 body of a summary for account `account` (a SIP URI). */
export function messageSummaryBody(summary: MailboxSummary, account: string): string {
  const waiting = summary.newCount > 0 ? 'yes' : 'no';
  return `Messages-Waiting: ${waiting}\r\nMessage-Account: ${account}\r\nVoice-Message: ${summary.newCount}/${summary.oldCount} (${summary.urgentNew}/${summary.urgentOld})\r\n`;
}
