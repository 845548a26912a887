/**
 * A client of the platform generated from the reference document (openapi-typescript types of
 * `dist/reference-api/paths.d.ts`, made at set-up by scripts/reference-client.ts, and openapi-fetch):
 * request paths, parameters and bodies are checked against the reference at compile time
 * (`tsc -p tsconfig.reference.json`), responses at run time by the conformance suite's validators.
 */
import createClient from 'openapi-fetch';
import type { paths } from '../../../dist/reference-api/paths';

export type ReferenceClient = ReturnType<typeof createClient<paths>>;

/** A client for `baseUrl` (e.g. http://127.0.0.1:PORT/v1.0) sending `token` as a Bearer credential. */
export function referenceClient(baseUrl: string, token: string): ReferenceClient {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });
}
