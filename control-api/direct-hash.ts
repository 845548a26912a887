/**
 * A new direct hash for a resource whose hashes are unique (a partial unique index): written with a
 * fresh hash, retried on the rare collision with another resource's hash.
 */
import { generateDirectHash } from '../core/extensions/credentials';

function isUniqueViolation(e: unknown, constraint: string): boolean {
  const err = e as { code?: string; constraint?: string };
  return !!err && err.code === '23505' && err.constraint === constraint;
}

export async function writeNewDirectHash<T>(constraint: string, write: (hash: string) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write(generateDirectHash());
    } catch (e) {
      if (isUniqueViolation(e, constraint) && attempt < 5) continue;
      throw e;
    }
  }
}
