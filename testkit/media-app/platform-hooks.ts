// The mocha hooks most call suites start with: one platform (sip-server and a media-app node in this
// process) for the whole suite, on a database emptied first, closed after it with every sipp killed.
import { truncateAll } from '../db';
import { killAllSipp, startPlatform, type Platform } from './harness';

/** Starts the platform with `env` before the suite (after truncateAll unless `truncate: false`; on `mediaServer`, the embedded engine when none); `set` receives it. */
export function usePlatform(env: Record<string, string>, set: (p: Platform) => void, opts: { truncate?: boolean; mediaServer?: 'embedded' | 'fsmrf' } = {}): void {
  let p: Platform | undefined;
  before(async () => {
    if (opts.truncate !== false) await truncateAll();
    p = await startPlatform(env, opts.mediaServer ? { mediaServer: opts.mediaServer } : {});
    set(p);
  });
  after(async () => {
    killAllSipp();
    await p?.close();
  });
}
