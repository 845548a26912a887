// What the fsmrf fork suites (fsmrf-fork, fsmrf-fork-edges) ask media-app's fork server as a client that is
// not the switch: the answer to a WebSocket upgrade on the fork subprotocol.
import WebSocket from 'ws';
import { FORK_SUBPROTOCOL } from '../../../media-app/media-server/fsmrf/fork-tap';

/** The status a WebSocket upgrade with `path` gets from the fork server on `port` (`open` when it opened). */
export function upgradeStatus(port: number, path: string): Promise<number | 'open'> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, FORK_SUBPROTOCOL);
    ws.on('error', () => undefined);
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => {
      resolve('open');
      ws.close();
    });
  });
}
