/**
 * digits_receive semantics over a stream of DTMF digits, shared by every CallPort: start from the
 * digits already held, append each new one, finish on length, on a terminating key (kept in the
 * digits) or at the timeout.
 */
import type { DigitsRequest, DigitsResult } from './call-port';
import { abortError, type FlowClock } from '../kit/clock';

export interface DigitSource {
  on(event: 'dtmf', listener: (digit: string) => void): unknown;
  off(event: 'dtmf', listener: (digit: string) => void): unknown;
}

export function digitsDone(digits: string, req: Pick<DigitsRequest, 'length' | 'key'>): DigitsResult['reason'] | null {
  if (req.length > 0 && digits.length >= req.length) return 'length';
  if (req.key && [...digits].some((d) => req.key.includes(d))) return 'key';
  return null;
}

export function collectDigits(source: DigitSource, clock: FlowClock, req: DigitsRequest, signal: AbortSignal): Promise<DigitsResult> {
  let digits = req.carryover;
  const already = digitsDone(digits, req);
  if (already) return Promise.resolve({ digits, reason: already });
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<DigitsResult>((resolve, reject) => {
    const timer = new AbortController();
    const finish = (err: Error | null, result?: DigitsResult) => {
      source.off('dtmf', onDigit);
      signal.removeEventListener('abort', onAbort);
      timer.abort();
      if (err) reject(err);
      else resolve(result!);
    };
    const onDigit = (d: string) => {
      digits += d;
      const reason = digitsDone(digits, req);
      if (reason) finish(null, { digits, reason });
    };
    const onAbort = () => finish(abortError(signal));
    source.on('dtmf', onDigit);
    signal.addEventListener('abort', onAbort, { once: true });
    if (req.duration > 0) {
      clock.sleep(req.duration, timer.signal).then(
        () => finish(null, { digits, reason: 'timeout' }),
        () => undefined,
      );
    }
  });
}
