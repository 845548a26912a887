/**
 * The egress policy (README.md): every connection the platform opens on a customer's behalf goes
 * through one EgressPolicy. Code that has a context gets it from there (control-api's
 * `ctx.egress`); leaf code that is only handed an environment uses `egressPolicyFor(env)`, which
 * builds one policy per environment object and keeps it.
 */
import { EgressPolicy, egressSettingsFromEnv } from './policy';

export { EgressPolicy, egressSettingsFromEnv, type EgressSettings, type CheckedAddress } from './policy';
export { EgressRefused, EgressFailed, type RefusalReason, type FailureReason } from './errors';
export type { EgressRequest, EgressResponse, EgressStream, EgressHead } from './http';
export { classify, classifyIp, normalizeHost, parseCidr, parseCidrList, sourceSubject, type AddressClass } from './address';

const byEnv = new WeakMap<object, EgressPolicy>();

/** The policy of an environment (process.env by default), built once per environment object. */
export function egressPolicyFor(env: NodeJS.ProcessEnv = process.env): EgressPolicy {
  let p = byEnv.get(env);
  if (!p) {
    p = new EgressPolicy(egressSettingsFromEnv(env));
    byEnv.set(env, p);
  }
  return p;
}
