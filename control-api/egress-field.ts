/**
 * Validation-time egress check of a URL field: a URL the platform will later fetch on the
 * customer's behalf is refused with 400 INVALID_ARGUMENT naming the field when its scheme,
 * credentials or literal address are not allowed (core/net; names are checked when fetched).
 */
import { invalidArgument } from '../core/errors';
import { EgressRefused } from '../core/net';
import type { AppContext } from './context';

/** Why the policy refuses `url` at validation time, or null. */
export function egressUrlProblem(ctx: AppContext, url: string): string | null {
  try {
    ctx.egress.assertUrlSyntax(url);
    return null;
  } catch (e) {
    if (e instanceof EgressRefused) return e.message;
    throw e;
  }
}

/** Checks a non-empty URL; `field` is the body field ("engine_url", "source_urls.3"). */
export function assertEgressUrl(ctx: AppContext, field: string, url: string | undefined): void {
  const problem = url ? egressUrlProblem(ctx, url) : null;
  if (problem) throw invalidArgument(`${field}: ${problem}`, [{ field, issue: problem }]);
}

/** assertEgressUrl over a list field: `source_urls.0`, `source_urls.1`... */
export function assertEgressUrls(ctx: AppContext, field: string, urls: readonly string[] | undefined): void {
  (urls ?? []).forEach((u, i) => assertEgressUrl(ctx, `${field}.${i}`, u));
}
