/**
 * outbound_registrations: a provider's or trunk's registration to a carrier's registrar (settings
 * plus the live state media-app/outreg writes). The password is write-only on the API; the
 * contact_user (the user of the Contact we register) is never shown: it is what identifies the
 * owner of an INVITE that arrives through the registration.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import type { OutboundRegistrationRow, RegistrationOwner, RegistrationState } from '../db/rows/outbound-registrations';
export type { OutboundRegistrationRow, RegistrationOwner, RegistrationState, RegistrationTransport } from '../db/rows/outbound-registrations';

export type RegistrationSettings = Pick<OutboundRegistrationRow, 'registrar' | 'domain' | 'username' | 'password' | 'expires' | 'transport'>;

/** The contact user: a fixed prefix and 128 random bits, so it cannot be guessed. */
export const CONTACT_USER_RE = /^reg-[0-9a-f]{32}$/;
const newContactUser = () => `reg-${randomBytes(16).toString('hex')}`;

export function registrationJson(r: OutboundRegistrationRow | null) {
  if (!r) return null;
  return {
    registrar: r.registrar,
    domain: r.domain,
    username: r.username,
    expires: r.expires,
    transport: r.transport,
    state: r.state,
    expires_at: formatLegacy(r.expires_at),
    last_error: r.last_error,
  };
}

export interface RegistrationStatus {
  state: RegistrationState;
  expires_at: Date | null;
  last_error: string;
}

export function outboundRegistrationsRepo(db: Db) {
  const table = () => db('outbound_registrations');
  return {
    async get(owner: RegistrationOwner, ownerId: string): Promise<OutboundRegistrationRow | null> {
      return ((await table().where({ owner_type: owner, owner_id: ownerId }).first()) as OutboundRegistrationRow | undefined) ?? null;
    },
    async getMany(owner: RegistrationOwner, ownerIds: string[]): Promise<Map<string, OutboundRegistrationRow>> {
      const rows = ownerIds.length ? ((await table().where({ owner_type: owner }).whereIn('owner_id', ownerIds)) as OutboundRegistrationRow[]) : [];
      return new Map(rows.map((r) => [r.owner_id, r]));
    },
    async byId(id: string): Promise<OutboundRegistrationRow | null> {
      return ((await table().where({ id }).first()) as OutboundRegistrationRow | undefined) ?? null;
    },
    async byContactUser(user: string): Promise<OutboundRegistrationRow | null> {
      if (!CONTACT_USER_RE.test(user)) return null;
      return ((await table().where({ contact_user: user }).first()) as OutboundRegistrationRow | undefined) ?? null;
    },
    /**
     * Sets (or replaces: the password stays when the new one is empty) the owner's settings; a
     * changed registration starts again from unregistered. null removes it.
     */
    async put(owner: RegistrationOwner, ownerId: string, customerId: string | null, s: RegistrationSettings | null): Promise<OutboundRegistrationRow | null> {
      if (!s) {
        await table().where({ owner_type: owner, owner_id: ownerId }).delete();
        return null;
      }
      const cur = await this.get(owner, ownerId);
      const now = clock.now();
      if (!cur) {
        const [row] = await table()
          .insert({ ...s, id: newId(), owner_type: owner, owner_id: ownerId, customer_id: customerId, contact_user: newContactUser(), tm_create: now })
          .returning('*');
        return row as OutboundRegistrationRow;
      }
      const patch = { ...s, password: s.password || cur.password, state: 'unregistered' as const, expires_at: null, last_error: '', tm_update: now };
      const [row] = await table().where({ id: cur.id }).update(patch).returning('*');
      return row as OutboundRegistrationRow;
    },
    /** Every registration whose owner is live. */
    async listLive(): Promise<OutboundRegistrationRow[]> {
      return (
        await db.raw(
          `SELECT r.* FROM outbound_registrations r
          LEFT JOIN providers p ON r.owner_type = 'provider' AND p.id = r.owner_id AND p.tm_delete IS NULL
          LEFT JOIN trunks t ON r.owner_type = 'trunk' AND t.id = r.owner_id AND t.tm_delete IS NULL
          WHERE p.id IS NOT NULL OR t.id IS NOT NULL`,
        )
      ).rows as OutboundRegistrationRow[];
    },
    /** Writes the live state (not tm_update: that marks a change of settings); null when the row is gone or its settings changed since `settingsOf`. */
    async setStatus(id: string, st: RegistrationStatus, settingsOf: Date | null): Promise<OutboundRegistrationRow | null> {
      const [row] = await table()
        .where({ id })
        .whereRaw('tm_update IS NOT DISTINCT FROM ?', [settingsOf])
        .update({ ...st })
        .returning('*');
      return (row as OutboundRegistrationRow | undefined) ?? null;
    },
  };
}
