// The embedded engine's cache of play URLs keeps the bound it is given (MediaServerOptions.promptCache,
// media-app's MEDIA_SERVER_PROMPT_CACHE_MAX_MB): the workers fetched with the fetch cache's defaults
// whatever the operator set, so only the fsmrf backend's prompt cache honoured the variable. A real
// HTTP server on loopback, real workers; the trim runs in the worker's background and is waited for.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { MediaServer } from '../../../media-engine';
import { wavHeader } from '../../../media-engine/audio/wav';
import { useMediaServer, usePcmuEndpoint } from '../../../testkit/media-engine/support';
import { until } from '../../../testkit/poll';
import { useServedFiles } from '../../../testkit/served-files';

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

  const files = useServedFiles('play-cache-bound-');

  it('four URLs played, two entries left', async () => {
    for (const n of [1, 2, 3, 4]) files.served.set(`/p${n}.wav`, { body: wav(n * 5) });
    const ep = leg.get();
    for (const n of [1, 2, 3, 4]) expect((await ep.play(`${files.base}/p${n}.wav`)).playbackMilliseconds).to.be.above(0);
    expect(files.asked.map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
    const audio = path.join(dir, 'cache', 'audio');
    const entries = () => fs.readdirSync(audio).filter((f) => /^url-[0-9a-f]{64}\.json$/.test(f)).length;
    await until(() => entries() === 2, 10_000, 'the worker trimmed its play cache to 2 URLs');
  });
});
