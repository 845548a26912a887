// A full garbage collection from a test, for checks that something is no longer held (WeakRef).
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** One full collection, synchronous (for sampling the live heap between turns). */
export function collectNow(): void {
  gc();
}

/** Collect a few times with turns of the event loop between, so pending callbacks drop what they hold. */
export async function collectGarbage(rounds = 4): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
}
