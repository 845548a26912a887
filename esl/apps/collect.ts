/**
 * `play_and_get_digits` (switch_play_and_get_digits over switch_ivr_read) on the channel's engine
 * endpoint: per try, the prompt (stopped by the first digit), digits until `max`, a terminator or a
 * timeout, then the checks (min, the regular expression); a failed try plays the invalid file. Sets
 * the variable named in the data, `<var>_invalid`, `read_result` and `read_terminator_used`.
 */
import { collectArgs, type CollectArgs } from './args';
import { setVar, onDigits, type AppContext } from './context';
import { playFiles } from './playback';

/** switch_ivr_read's outcome (its switch_status_t). */
type ReadStatus = 'success' | 'timeout' | 'toosmall' | 'hangup';

/** The terminators string: `=` first makes one required, `+` before a digit keeps it in the digits. */
interface Terminators {
  digits: string;
  kept: string;
  required: boolean;
}

export function parseTerminators(s: string): Terminators {
  const required = s.startsWith('=');
  let digits = '';
  let kept = '';
  const body = required ? s.slice(1) : s;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '+' || c === 'x') continue;
    digits += c;
    if (body[i - 1] === '+') kept += c;
  }
  return { digits, kept, required };
}

/** One try (switch_ivr_read): the prompt, then digits, each phase's timer owned by the try and cancelled when it ends. */
function readOnce(ctx: AppContext, a: CollectArgs, t: Terminators): Promise<{ status: ReadStatus; digits: string; terminator: string }> {
  return new Promise((resolve) => {
    let digits = '';
    let terminator = '';
    let decided: ReadStatus | null = null;
    let prompting = true;
    let timer: NodeJS.Timeout | null = null;
    const settle = () => {
      if (prompting || !decided) return; // the prompt stops first (its PLAYBACK_STOP, its variables)
      if (timer) clearTimeout(timer);
      release();
      ctx.signal.removeEventListener('abort', onAbort);
      let status = decided;
      if (status !== 'hangup' && (digits.length < a.min || (t.required && !terminator))) status = 'toosmall';
      resolve({ status, digits, terminator });
    };
    const decide = (s: ReadStatus) => {
      decided ??= s;
      settle();
    };
    const arm = (ms: number) => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => decide('timeout'), ms);
    };
    const release = onDigits(ctx, (e) => {
      if (decided) return;
      if (t.digits.includes(e.dtmf)) {
        terminator = e.dtmf;
        if (t.kept.includes(e.dtmf)) digits += e.dtmf;
        return decide('success');
      }
      digits += e.dtmf;
      if (digits.length >= a.max) return decide('success');
      if (!prompting) arm(a.digitTimeoutMs);
    });
    const onAbort = () => decide('hangup');
    ctx.signal.addEventListener('abort', onAbort);
    const prompt = a.file && a.file.toLowerCase() !== 'silence' ? playFiles(ctx, a.file, () => true, true) : Promise.resolve('done');
    void prompt.then((st) => {
      prompting = false;
      if (st === 'hangup') return decide('hangup');
      if (decided || a.max === 0) return decide('success');
      arm(digits.length ? a.digitTimeoutMs : a.timeoutMs);
    });
  });
}

/** switch_play_and_get_digits: the tries; the Application-Response is `_none_` (it sets none). */
export async function playAndGetDigits(ctx: AppContext, data: string): Promise<string> {
  const a = collectArgs(data);
  if (!a) return '_none_';
  const t = parseTerminators(a.terminators);
  const invalidVar = a.varName ? `${a.varName}_invalid` : '';
  if (a.regexp && invalidVar) setVar(ctx, invalidVar, null);
  let re: RegExp | null = null;
  try {
    re = a.regexp ? new RegExp(a.regexp) : null;
  } catch {
    re = /(?!)/; // a pattern that does not compile matches nothing (switch_regex_match fails)
  }
  for (let tries = a.tries; tries > 0 && !ctx.signal.aborted; tries--) {
    setVar(ctx, 'read_result', null);
    setVar(ctx, 'read_terminator_used', null);
    if (a.varName) setVar(ctx, a.varName, null);
    const r = await readOnce(ctx, a, t);
    if (r.status === 'hangup') break;
    if (r.terminator) setVar(ctx, 'read_terminator_used', r.terminator);
    setVar(ctx, 'read_result', r.status === 'success' ? 'success' : r.status === 'timeout' ? 'timeout' : 'failure');
    if (a.varName && r.digits) setVar(ctx, a.varName, r.digits);
    const ok = r.status === 'success' || (r.status === 'timeout' && r.digits.length >= a.min);
    if (a.min === 0 && r.digits === '' && r.terminator) return '_none_';
    if (ok && r.digits) {
      if (!re || re.test(r.digits)) return '_none_';
      if (a.varName) setVar(ctx, a.varName, null);
      if (invalidVar) setVar(ctx, invalidVar, r.digits);
    }
    if (a.invalidFile) await playFiles(ctx, a.invalidFile, () => false);
  }
  return '_none_';
}
