// The fixture of the phone provisioning suites (linphonec and baresip fetching their configuration): a
// media-app platform, control-api configured for it and served on loopback (the provisioning URLs'
// base), and a customer.
import http from 'node:http';
import { buildTestApp, createFixture, type Fixture, type TestApp } from './api';
import { truncateAll } from './db';
import { killAllSipp, startPlatform, type Platform } from './media-app/harness';

export interface ProvisioningStack {
  p: Platform;
  t: TestApp;
  f: Fixture;
  /** control-api on loopback: http://127.0.0.1:<port> */
  base: string;
}

/**
 * Mocha hooks: on an emptied database, the platform (`platformEnv` over egress to loopback) and
 * control-api (`apiEnv` over the platform's key prefix, SIP port and domain), handed to `set` once up.
 */
export function useProvisioningStack(set: (s: ProvisioningStack) => void, o: { platformEnv?: Record<string, string>; apiEnv?: Record<string, string> } = {}): void {
  let s: ProvisioningStack | undefined;
  let server: http.Server | undefined;
  before(async () => {
    await truncateAll();
    const p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ...o.platformEnv });
    const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, SIP_PORT: String(p.sipPort), SIP_DOMAIN: p.config.sipDomain, ...o.apiEnv } });
    const f = await createFixture(t.ctx);
    server = http.createServer(t.app);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    s = { p, t, f, base: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
    set(s);
  });
  after(async () => {
    killAllSipp();
    server?.close();
    await s?.t.close();
    await s?.p.close();
  });
}
