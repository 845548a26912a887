/**
 * ai_versions: the numbered, immutable versions of an AI's configuration (issue 56, docs/evals.md
 * "Agent versions"). aisRepo writes one in the transaction of every create (version 1, every field) and
 * of every update that changed a field (the next number, the names of the fields that changed, who
 * changed them); nothing deletes one, and its configuration never changes. A version keeps its vendor
 * keys sealed as the AI row does (engine_key, the keys in parameter), so the re-encryption command
 * reaches them (core/secrets/stored-keys.ts) and the API shows them masked, but no longer than they
 * are the AI's (core/secrets/version-keys.ts): a key superseded by a later version's for the same place, and
 * every key once the AI is deleted, is blanked and its path listed in keys_withheld.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import { openKey, mapParameterKeys } from '../secrets/keys';
import { KEY_PATHS, keyAt, keyPlace, newKeys, restoreWithheld, withheld, type KeyPath, type Keyed } from '../secrets/version-keys';
import { AI_VERSIONED_FIELDS, type AiRow, type AiVersionCreator, type AiVersionedField, type AiVersionRow } from '../db/rows/ais';
export type { AiVersionRow, AiVersionCreator } from '../db/rows/ais';

/** Versions made by the platform itself (a migration, a test's repository call). */
export const SYSTEM_CREATOR: AiVersionCreator = { type: 'system', id: null };

/** A sealed key opened for comparing; one that cannot be opened stays sealed (it then never matches). */
export function openOrKeep(v: string): string {
  try {
    return openKey(v);
  } catch {
    return v;
  }
}

/** A field's value as compared between two rows: keys opened (sealing is not deterministic), json as text. */
function comparable(ai: AiRow, f: AiVersionedField): string {
  if (f === 'engine_key') return openOrKeep(ai.engine_key ?? '');
  if (f === 'parameter') return JSON.stringify(mapParameterKeys(ai.parameter, openOrKeep));
  return JSON.stringify(ai[f] ?? null);
}

/** The fields whose value differs between `before` and `after`; every field for a new AI. */
export function changedFields(before: AiRow | null, after: AiRow): AiVersionedField[] {
  return before ? AI_VERSIONED_FIELDS.filter((f) => comparable(before, f) !== comparable(after, f)) : [...AI_VERSIONED_FIELDS];
}

/**
 * The AI as the version had it: the row's identity, the version's configuration (keys still sealed);
 * a key withheld from the version is the AI's current one where it goes to the same place, else the
 * version cannot run and this says why.
 */
export function aiAtVersion(ai: AiRow, v: AiVersionRow): AiRow | { error: string } {
  const at: AiRow = { ...ai, ...v.config, engine_key: v.engine_key, parameter: v.parameter };
  const r = restoreWithheld(at, (v.keys_withheld ?? []) as KeyPath[], ai);
  return 'error' in r ? { error: `version ${v.number} of ai ${ai.id} cannot run: ${r.error}` } : r;
}

type VersionKeys = Pick<AiVersionRow, 'id' | 'config' | 'engine_key' | 'parameter' | 'keys_withheld'>;
const keyedOf = (v: VersionKeys): Keyed => ({ ...v.config, engine_key: v.engine_key, parameter: v.parameter });

/** Blanks the keys at `paths` of the versions `vs` where `hit` says so; lists them in keys_withheld. */
async function withhold(trx: Db, vs: VersionKeys[], hit: (v: Keyed, p: KeyPath) => boolean): Promise<void> {
  for (const v of vs) {
    const keyed = keyedOf(v);
    const w = withheld(
      keyed,
      KEY_PATHS.filter((p) => hit(keyed, p)),
    );
    if (!w.paths.length) continue;
    const all = [...new Set([...(v.keys_withheld ?? []), ...w.paths])];
    await trx('ai_versions')
      .where({ id: v.id })
      .update({ engine_key: w.row.engine_key ?? '', parameter: JSON.stringify(w.row.parameter ?? {}), keys_withheld: JSON.stringify(all) });
  }
}

export function aiVersionsRepo(db: Db) {
  return {
    /**
     * Writes the version `after` makes, inside the caller's transaction (which holds the AI row):
     * the next number, what changed since `before` (null: a new AI). Nothing is written when no field
     * changed; returns the version written, or null.
     */
    async write(trx: Db, before: AiRow | null, after: AiRow, by: AiVersionCreator): Promise<AiVersionRow | null> {
      const changed = changedFields(before, after);
      if (!changed.length) return null;
      const last = await trx('ai_versions').where({ ai_id: after.id }).orderBy('number', 'desc').select('number').first();
      const { engine_key, parameter, ...rest } = Object.fromEntries(AI_VERSIONED_FIELDS.map((f) => [f, after[f]])) as Pick<AiRow, AiVersionedField>;
      const [row] = await trx('ai_versions')
        .insert({
          id: newId(),
          customer_id: after.customer_id,
          ai_id: after.id,
          number: (last?.number ?? 0) + 1,
          config: JSON.stringify(rest),
          engine_key: engine_key ?? '',
          parameter: JSON.stringify(parameter ?? {}),
          changed: JSON.stringify(changed),
          creator_type: by.type,
          creator_id: by.id,
          tm_create: clock.now(),
        })
        .returning('*');
      // a new key supersedes every earlier version's key for the same place (a rotated key is not kept)
      const fresh = before ? newKeys(before, after, (a, b) => openOrKeep(a) === openOrKeep(b)) : [];
      if (fresh.length) {
        const earlier = await trx('ai_versions').where({ ai_id: after.id }).where('number', '<', row!.number).select('id', 'config', 'engine_key', 'parameter', 'keys_withheld');
        await withhold(trx, earlier, (v, p) => fresh.includes(p) && keyAt(v, p) !== '' && keyPlace(v, p) === keyPlace(after, p));
      }
      return row!;
    },
    /** Blanks every key of every version of a deleted AI, inside the caller's transaction (aisRepo.softDelete). */
    async withholdAll(trx: Db, aiId: string): Promise<void> {
      await withhold(trx, await trx('ai_versions').where({ ai_id: aiId }).select('id', 'config', 'engine_key', 'parameter', 'keys_withheld'), () => true);
    },
    /** The customer's versions of an AI, newest first. */
    async list(customerId: string, aiId: string, params: PageParams): Promise<Page<AiVersionRow>> {
      return toPage(await paginate<AiVersionRow>(db('ai_versions').where({ customer_id: customerId, ai_id: aiId }).select('*'), params), (r) => r);
    },
    async get(customerId: string, aiId: string, number: number): Promise<AiVersionRow | null> {
      return (await db('ai_versions').where({ customer_id: customerId, ai_id: aiId, number }).first()) ?? null;
    },
    /** The numbers among `numbers` that are versions of this AI of the customer's. */
    async existing(customerId: string, aiId: string, numbers: number[]): Promise<number[]> {
      const rows = await db('ai_versions').where({ customer_id: customerId, ai_id: aiId }).whereIn('number', numbers).select('number');
      return rows.map((r) => r.number);
    },
  };
}
