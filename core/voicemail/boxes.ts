/**
 * Voicemail boxes: per extension (`extension_id`) or free-standing, each with a box number unique in
 * its customer, a PIN hashed as passwords are (core/password.ts), greetings and options. Delete is
 * soft; the box's messages go with it.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { hashPassword, verifyPassword } from '../password';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { VoicemailBoxRow } from '../db/rows/voicemail-boxes';
export type { VoicemailBoxRow } from '../db/rows/voicemail-boxes';

/** A PIN: 4 to 10 digits. */
export const PIN_PATTERN = /^\d{4,10}$/;
/** A box number: 1 to 20 digits. */
export const BOX_NUMBER_PATTERN = /^\d{1,20}$/;

/** The settings a box is created or updated with (the PIN in clear; it is hashed here). */
export interface BoxInput {
  extension_id?: string | null;
  number?: string;
  pin?: string;
  name?: string;
  detail?: string;
  greeting_text?: string;
  language?: string;
  max_message_sec?: number;
  max_messages?: number;
  email?: string;
  attach_audio?: boolean;
  delete_after_email?: boolean;
  ai_summary?: boolean;
}

export type BoxWriteError = 'duplicate_number' | 'duplicate_extension' | 'extension_not_found';

/** The API JSON: no PIN, greetings as flags. */
export function voicemailBoxJson(b: VoicemailBoxRow) {
  return {
    id: b.id,
    customer_id: b.customer_id,
    extension_id: b.extension_id ?? '',
    number: b.number,
    name: b.name,
    detail: b.detail,
    greeting_unavailable: b.greeting_unavailable !== '',
    greeting_busy: b.greeting_busy !== '',
    greeting_name: b.greeting_name !== '',
    greeting_text: b.greeting_text,
    language: b.language,
    max_message_sec: b.max_message_sec,
    max_messages: b.max_messages,
    email: b.email,
    attach_audio: b.attach_audio,
    delete_after_email: b.delete_after_email,
    ai_summary: b.ai_summary,
    tm_create: formatLegacy(b.tm_create),
    tm_update: formatLegacy(b.tm_update),
    tm_delete: formatLegacy(b.tm_delete),
  };
}

function uniqueViolation(e: unknown): BoxWriteError | null {
  const err = e as { code?: string; constraint?: string };
  if (err.code === '23505') return err.constraint === 'voicemail_boxes_extension_live_uq' ? 'duplicate_extension' : 'duplicate_number';
  return null;
}

export function voicemailBoxesRepo(db: Db) {
  const live = () => db('voicemail_boxes').whereNull('tm_delete');

  async function extensionOk(customerId: string, extensionId: string | null | undefined): Promise<boolean> {
    if (!extensionId) return true;
    return Boolean(await db('extensions').whereNull('tm_delete').where({ id: extensionId, customer_id: customerId }).first('id'));
  }

  return {
    async create(customerId: string, input: BoxInput & { number: string; pin: string }): Promise<VoicemailBoxRow | BoxWriteError> {
      if (!(await extensionOk(customerId, input.extension_id))) return 'extension_not_found';
      const { pin, ...rest } = input;
      try {
        const [row] = await db('voicemail_boxes')
          .insert({ ...rest, extension_id: input.extension_id || null, id: newId(), customer_id: customerId, pin_hash: await hashPassword(pin), tm_create: clock.now() })
          .returning('*');
        return row as VoicemailBoxRow;
      } catch (e) {
        const u = uniqueViolation(e);
        if (u) return u;
        throw e;
      }
    },
    async get(customerId: string, id: string): Promise<VoicemailBoxRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as VoicemailBoxRow | undefined) ?? null;
    },
    /** The number of the customer's box, deleted or not; null for no such box. */
    async numberOf(customerId: string, id: string): Promise<string | null> {
      const row = (await db('voicemail_boxes').where({ id, customer_id: customerId }).first('number')) as { number: string } | undefined;
      return row ? row.number : null;
    },
    async byNumber(customerId: string, number: string): Promise<VoicemailBoxRow | null> {
      return ((await live().where({ number, customer_id: customerId }).first()) as VoicemailBoxRow | undefined) ?? null;
    },
    async byExtension(customerId: string, extensionId: string): Promise<VoicemailBoxRow | null> {
      return ((await live().where({ extension_id: extensionId, customer_id: customerId }).first()) as VoicemailBoxRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<VoicemailBoxRow>> {
      return toPage(await paginate<VoicemailBoxRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    async update(customerId: string, id: string, input: BoxInput): Promise<VoicemailBoxRow | BoxWriteError | null> {
      if (!(await extensionOk(customerId, input.extension_id))) return 'extension_not_found';
      const { pin, ...rest } = input;
      const patch: Record<string, unknown> = { ...rest, tm_update: clock.now() };
      if (input.extension_id !== undefined) patch.extension_id = input.extension_id || null;
      if (pin !== undefined) patch.pin_hash = await hashPassword(pin);
      try {
        const [row] = await live().where({ id, customer_id: customerId }).update(patch).returning('*');
        return (row as VoicemailBoxRow | undefined) ?? null;
      } catch (e) {
        const u = uniqueViolation(e);
        if (u) return u;
        throw e;
      }
    },
    /** Sets one greeting's file ('' clears it). */
    async setGreeting(customerId: string, id: string, kind: GreetingKind, filename: string): Promise<VoicemailBoxRow | null> {
      const [row] = await live()
        .where({ id, customer_id: customerId })
        .update({ [`greeting_${kind}`]: filename, tm_update: clock.now() })
        .returning('*');
      return (row as VoicemailBoxRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<VoicemailBoxRow | null> {
      const now = clock.now();
      return db.transaction(async (trx) => {
        const [row] = await trx('voicemail_boxes').whereNull('tm_delete').where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
        if (row) await trx('voicemail_messages').whereNull('tm_delete').where({ box_id: id }).update({ tm_delete: now, tm_update: now });
        return (row as VoicemailBoxRow | undefined) ?? null;
      });
    },
  };
}

export type GreetingKind = 'unavailable' | 'busy' | 'name';

/** True when `pin` opens the box (constant time; false for a malformed PIN). */
export async function checkPin(box: Pick<VoicemailBoxRow, 'pin_hash'>, pin: string): Promise<boolean> {
  if (!PIN_PATTERN.test(pin)) return false;
  return verifyPassword(pin, box.pin_hash);
}
