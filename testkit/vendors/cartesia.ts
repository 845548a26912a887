// Cartesia stand-in (their API reference): WebSocket /tts/websocket, `X-API-Key` and `Cartesia-Version`
// on the upgrade (401 otherwise); a generation request { model_id, transcript, voice, output_format,
// context_id } is answered with `chunk` messages (base64 audio in `data`) and `done`; pcm_mulaw 8000 only.
import http from 'node:http';
import { WebSocketServer } from 'ws';
import { failureFor, MARKER_HZ, sleep, toneMs, toneUlaw, type StandIn, type StandInOptions } from './marker';
import { listenOnLoopback } from '../loopback-server';

export async function startCartesia(options: StandInOptions = {}): Promise<StandIn> {
  const requests: StandIn['requests'] = [];
  const firstBytes: number[] = [];
  let served = 0;
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    requests.push({ url: req.url ?? '', headers: req.headers, body: null });
    const refuse = (status: number) => {
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    };
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/tts/websocket') return refuse(404);
    if (req.headers['x-api-key'] !== (options.apiKey ?? 'ca-test-key') || !req.headers['cartesia-version']) return refuse(401);
    const fail = failureFor(options, ++served);
    if (fail) return refuse(fail);
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', async (raw) => {
        let m: { transcript?: unknown; context_id?: unknown; output_format?: { encoding?: unknown; sample_rate?: unknown } };
        try {
          m = JSON.parse(String(raw));
        } catch {
          return ws.send(JSON.stringify({ type: 'error', error: 'invalid JSON', status_code: 400, done: true }));
        }
        requests.push({ url: req.url ?? '', headers: req.headers, body: m });
        const ctx = m.context_id;
        if (typeof m.transcript !== 'string' || m.output_format?.encoding !== 'pcm_mulaw' || m.output_format.sample_rate !== 8000) {
          return ws.send(JSON.stringify({ type: 'error', context_id: ctx, error: 'unsupported request', status_code: 400, done: true }));
        }
        await sleep(options.firstByteMs ?? 0);
        const audio = toneUlaw(MARKER_HZ.cartesia, toneMs(m.transcript));
        for (let i = 0; i < audio.length && ws.readyState === ws.OPEN; i += 800) {
          if (i === 0) firstBytes.push(performance.now());
          ws.send(JSON.stringify({ type: 'chunk', context_id: ctx, data: audio.subarray(i, i + 800).toString('base64'), done: false, status_code: 206 }));
        }
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'done', context_id: ctx, done: true, status_code: 206 }));
      });
    });
  });
  const listening = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${listening.port}`,
    options,
    requests,
    firstBytes,
    close: () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      return listening.close();
    },
  };
}
