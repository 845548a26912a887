// The embedded engine's cache of play URLs keeps the bound it is given (MediaServerOptions.promptCache,
// media-app's MEDIA_SERVER_PROMPT_CACHE_MAX_MB): the workers fetched with the fetch cache's defaults
// whatever the operator set, so only the fsmrf backend's prompt cache honoured the variable. A real
// HTTP server on loopback, real workers; the trim runs in the worker's background and is waited for.
import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { MediaServer } from '../../../media-engine';
import { wavHeader } from '../../../media-engine/audio/wav';
import { useMediaServer, usePcmuEndpoint } from '../../../testkit/media-engine/support';
import { until } from '../../../testkit/poll';

/** n × 20 ms of a quiet square wave at 8 kHz: each n its own body. */
function wav(n: number): Buffer {
  const samples = new Int16Array(160 * n).map((_, i) => (i % 16 < 8 ? 300 : -300));
  const body = Buffer.from(samples.buffer);
  return Buffer.concat([wavHeader(body.length, 8000), body]);
}

describe("media-engine: the workers' cache of play URLs keeps MediaServerOptions.promptCache's bound", function () {
  this.timeout(60_000);
  let ms: MediaServer;
  let dir: string;
  useMediaServer(
    {
      ports: 10,
      workers: 1,
      cache: true,
      egress: { allowCidrs: ['127.0.0.0/8'], dnsServers: [], selfHosts: [] },
      server: { promptCache: { maxCacheEntries: 2, evictGraceMs: 0 } },
    },
    (f) => ({ ms, dir } = f),
  );
  const leg = usePcmuEndpoint(() => ms);

  it('four URLs played, two entries left', async () => {
    const server = http.createServer((req, res) => {
      const n = Number(/^\/p(\d)\.wav$/.exec(req.url ?? '')?.[1]);
      if (!n) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav(n * 5));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const ep = leg.get();
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const n of [1, 2, 3, 4]) expect((await ep.play(`${base}/p${n}.wav`)).playbackMilliseconds).to.be.above(0);
      const audio = path.join(dir, 'cache', 'audio');
      const entries = () => fs.readdirSync(audio).filter((f) => /^url-[0-9a-f]{64}\.json$/.test(f)).length;
      await until(() => entries() === 2, 10_000, 'the worker trimmed its play cache to 2 URLs');
    } finally {
      server.close();
    }
  });
});
