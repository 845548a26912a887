import { WebSocket } from 'ws';

/**
 * A WebSocket handshake's HTTP status: 101 when it opened (closed again at once), else the refusal's
 * status and the `reason` of its error envelope. `headers` go on the handshake (Cookie, Origin, ...).
 */
export function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<{ status: number; reason?: string }> {
  return new Promise((resolve, reject) => {
    const s = new WebSocket(url, { headers });
    s.once('open', () => {
      s.close();
      resolve({ status: 101 });
    });
    s.once('error', () => undefined);
    s.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, reason: (JSON.parse(body) as { error?: { reason?: string } }).error?.reason });
        } catch (e) {
          reject(e as Error);
        }
      });
    });
  });
}
