/**
 * Library debug output never shows a secret whole. drachtio-srf logs every message it sends when
 * `DEBUG=drachtio:*` (drachtio:agent, `wp#send … authenticate|<secret>|…`), so an operator turning
 * on its debug to follow a SIP problem would print the drachtio secret. The `debug` package's one
 * output function is wrapped here: each secret registered is replaced by `***` in every line, before
 * it is written. The instance is the one drachtio-srf loads (resolved from it), whatever npm hoists.
 */
import { createRequire } from 'node:module';
import { formatWithOptions, type InspectOptions } from 'node:util';

interface DebugModule {
  log: (...args: unknown[]) => unknown;
  inspectOpts?: InspectOptions;
}

const secrets = new Set<string>();
let wrapped = false;

/** `line` with every registered secret replaced by `***`. */
export function redactSecrets(line: string): string {
  let out = line;
  for (const s of secrets) out = out.split(s).join('***');
  return out;
}

/** Registers `secret` (empty: nothing) and wraps the debug output once. */
export function redactDebugSecret(secret: string): void {
  if (!secret) return;
  secrets.add(secret);
  if (wrapped) return;
  wrapped = true;
  const debug = createRequire(require.resolve('drachtio-srf'))('debug') as DebugModule;
  debug.log = (...args: unknown[]) => process.stderr.write(redactSecrets(formatWithOptions(debug.inspectOpts ?? {}, ...args)) + '\n');
}
