// An HTTP stand-in (a vendor's API, a customer's app) listening on a free port of 127.0.0.1, and closed
// with every connection it still holds (a keep-alive client would otherwise hold close() open).
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Starts `server` on 127.0.0.1; its port, and a close that ends its open connections first. A listen
 * that fails rejects with its error (the server's own 'error' listeners, if any, see it too).
 */
export async function listenOnLoopback(server: http.Server): Promise<{ port: number; close(): Promise<void> }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
