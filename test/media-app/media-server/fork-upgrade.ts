// What the fsmrf fork suites (fsmrf-fork, fsmrf-fork-edges) ask media-app's fork server as a client that is
// not the switch: the answer to a WebSocket upgrade on the fork subprotocol.
import WebSocket from 'ws';
import { FORK_SUBPROTOCOL } from '../../../media-app/media-server/fsmrf/fork-tap';

/**
 * The status a WebSocket upgrade with `path` gets from the fork server on `port` (`open` when it opened);
 * rejects with the connection's error (refused, reset) or when it closed with no answer.
 */
export function upgradeStatus(port: number, path: string): Promise<number | 'open'> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, FORK_SUBPROTOCOL);
    // after an answer the promise is settled: a later error (the terminate below) changes nothing
    ws.on('error', reject);
    ws.once('close', () => reject(new Error(`the upgrade to ${path} closed with no answer`)));
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
