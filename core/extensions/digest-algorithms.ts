/**
 * Digest algorithms a SIP challenge may offer (RFC 8760), shared by the registrar (the challenge
 * order) and the API (an extension's override). Order matters: many clients (libre/baresip 1.0,
 * older desk-phone firmware, sipp) answer only the FIRST challenge and give up when it is not MD5,
 * so the platform default puts MD5 first; SHA-256 clients find their challenge further down.
 */
export const DIGEST_ALGORITHMS = ['MD5', 'SHA-256'] as const;
export type DigestAlgorithm = (typeof DIGEST_ALGORITHMS)[number];

/** The default challenge order: every common phone registers with it. */
export const DEFAULT_DIGEST_ALGORITHMS: readonly DigestAlgorithm[] = ['MD5', 'SHA-256'];

export const isDigestAlgorithm = (v: string): v is DigestAlgorithm => (DIGEST_ALGORITHMS as readonly string[]).includes(v);

/** Why a list is not a valid challenge order, or null: 1-2 distinct values of MD5 and SHA-256. */
export function digestAlgorithmsProblem(list: readonly string[]): string | null {
  if (list.length === 0) return 'must list at least one algorithm';
  const bad = list.find((a) => !isDigestAlgorithm(a));
  if (bad !== undefined) return `unknown algorithm ${JSON.stringify(bad)} (use MD5 and/or SHA-256)`;
  if (new Set(list).size !== list.length) return 'lists an algorithm twice';
  return null;
}
