/**
 * Re-encryption of the stored vendor keys for a new platform secret (docs/ai.md "Keys", rotation):
 * every key sealed under the old secret is opened and sealed again under the new one; a key stored
 * in plain (before migration 0958) is sealed under the new one. One transaction: when any key
 * cannot be opened under the old secret nothing is written, and the error lists where those keys are
 * (table, row, field), never a key.
 */
import type { Knex } from 'knex';
import { isSealed, openKey, SealedKeyError, sealKey } from './keys';
import { convertStoredKeys, type KeyPlace } from './stored-keys';

export class RekeyError extends Error {
  constructor(readonly places: KeyPlace[]) {
    super(
      `${places.length} stored key(s) cannot be opened under the old secret (altered, or sealed under yet another secret); nothing was changed: ` +
        places
          .slice(0, 20)
          .map((p) => `${p.table} ${p.id} ${p.field}`)
          .join('; ') +
        (places.length > 20 ? `; and ${places.length - 20} more` : ''),
    );
    this.name = 'RekeyError';
  }
}

export interface RekeyResult {
  /** rows whose keys were (or, on a dry run, would be) sealed again */
  rows: number;
  keys: number;
}

/** Seals every stored key again under `to` (keys derived with deriveKey); `dryRun` checks and counts only. */
export async function rekeyStoredKeys(knex: Knex, from: Buffer, to: Buffer, o: { dryRun?: boolean } = {}): Promise<RekeyResult> {
  if (from.equals(to)) throw new SealedKeyError('the old and the new secret are the same: nothing to re-encrypt');
  return knex.transaction(async (trx) => {
    const bad: KeyPlace[] = [];
    let keys = 0;
    const rows = await convertStoredKeys(
      trx,
      (v, at) => {
        keys++;
        try {
          return sealKey(isSealed(v) ? openKey(v, from) : v, to);
        } catch (e) {
          if (!(e instanceof SealedKeyError)) throw e;
          bad.push(at);
          return v;
        }
      },
      () => true,
      // the failures are known only after every row was read: write nothing if there are any
      () => bad.length === 0 && !o.dryRun,
    );
    if (bad.length) throw new RekeyError(bad);
    return { rows, keys };
  });
}
