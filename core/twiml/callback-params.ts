/**
 * The extra parameters a compiled document's actions leave for the next fetch (Digits, RecordingUrl,
 * DialCallStatus ...; in `twiml.param.*`, TWIML_VARS.paramPrefix), taken once: each is sent with one fetch
 * only. Pure over the flow's variables (media-app's Variables has this shape).
 */
import { TWIML_VARS } from './program';

export interface CallbackVars {
  snapshot(): Record<string, string>;
  get(name: string): string | undefined;
  set(name: string, value: string): void;
}

/** The extra parameters the compiled actions left, then cleared; Digits without its finishOnKey. */
export function takeCallbackParams(vars: CallbackVars): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(vars.snapshot())) {
    if (!k.startsWith(TWIML_VARS.paramPrefix)) continue;
    out[k.slice(TWIML_VARS.paramPrefix.length)] = v;
    vars.set(k, '');
  }
  for (const k of Object.keys(out)) if (out[k] === '') delete out[k];
  if (out.Digits !== undefined) {
    const finish = vars.get(TWIML_VARS.finishOnKey) ?? '';
    if (finish && out.Digits.endsWith(finish)) out.Digits = out.Digits.slice(0, -finish.length);
  }
  return out;
}
