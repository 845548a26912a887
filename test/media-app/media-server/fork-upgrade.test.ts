// The fork suites' upgrade probe (fork-upgrade.ts) settles on a connection that fails: a refused connection
// is the probe's error, never a promise left for mocha's timeout with no reason given.
import { expect } from 'chai';
import { freePort } from '../../../testkit/ports';
import { upgradeStatus } from './fork-upgrade';

describe('fork suites: the upgrade probe', () => {
  it('a refused connection rejects with the reason', async () => {
    const port = await freePort(); // nothing listens on it
    const e = await Promise.race([
      upgradeStatus(port, '/x').then(
        () => null,
        (x: Error) => x,
      ),
      new Promise<'unsettled'>((r) => setTimeout(() => r('unsettled'), 5000).unref()),
    ]);
    expect(e).to.be.an.instanceOf(Error);
    expect((e as Error & { code?: string }).code).to.equal('ECONNREFUSED');
  });
});
