/**
 * Digest algorithms a SIP challenge may offer (RFC 8760), shared by the registrar (the challenge
 * order) and the API (an extension's override). MD5-only clients fail on a second line: libre
 * (baresip 1.0) reads EVERY WWW-Authenticate line and gives up (`Register: Function not
 * implemented`) as soon as one is not MD5, whatever the order; sipp and older desk-phone firmware
 * answer only the first line. SHA-256 clients all fall back to MD5, so the platform default offers
 * MD5 alone; SHA-256 is offered per extension (`digest_algorithms`) or platform-wide by setting.
 */
export const DIGEST_ALGORITHMS = ['MD5', 'SHA-256'] as const;
export type DigestAlgorithm = (typeof DIGEST_ALGORITHMS)[number];

/** The default challenge: every common phone registers with it (tested with baresip 1.0 and sipp). */
export const DEFAULT_DIGEST_ALGORITHMS: readonly DigestAlgorithm[] = ['MD5'];

export const isDigestAlgorithm = (v: string): v is DigestAlgorithm => (DIGEST_ALGORITHMS as readonly string[]).includes(v);

/** Why a list is not a valid challenge order, or null: 1-2 distinct values of MD5 and SHA-256. */
export function digestAlgorithmsProblem(list: readonly string[]): string | null {
  if (list.length === 0) return 'must list at least one algorithm';
  const bad = list.find((a) => !isDigestAlgorithm(a));
  if (bad !== undefined) return `unknown algorithm ${JSON.stringify(bad)} (use MD5 and/or SHA-256)`;
  if (new Set(list).size !== list.length) return 'lists an algorithm twice';
  return null;
}
