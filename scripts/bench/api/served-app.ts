/**
 * The control-api app the API benchmarks measure: built on the test database with rate limits off,
 * served over HTTP on a loopback port. `close` ends its connections, the listener and the app.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildTestApp, type TestApp } from '../../../testkit/api';

export interface ServedApp {
  t: TestApp;
  /** http://127.0.0.1:<port> */
  base: string;
  close(): Promise<void>;
}

export async function serveBenchApp(): Promise<ServedApp> {
  const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
  const server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    t,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await t.close();
    },
  };
}
