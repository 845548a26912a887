// A customer's webhook endpoint on loopback: the suites give the server (what it keeps of each request
// and what it answers); this puts it on a free port and closes it.
import type http from 'node:http';
import { freePort } from './ports';

export interface HookReceiver<T> {
  /** where the platform is to send: http://127.0.0.1:<port>/hook */
  url: string;
  /** what the server kept, in arrival order */
  got: T[];
  close(): Promise<void>;
}

/** Listens `server` on a free loopback port; `got` is what its handler fills. */
export async function listenHook<T>(server: http.Server, got: T[]): Promise<HookReceiver<T>> {
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
