// The stack the conference suites share: the call plane (startPlatform, on the embedded or the fsmrf
// media backend), a control-api on its Redis prefix and data directory, a customer whose trunk is
// loopback, and the suite's RtpParties closed after it. Hooks registered here; the parts handed to the
// suite through `ready`.
import request from 'supertest';
import { trunksRepo } from '../../core/repos/trunks';
import { testDb, truncateAll } from '../../testkit/db';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { killAllSipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import type { RtpParty } from '../../testkit/conference/party';
import type { ConferenceRow } from '../../core/db/rows/conferences';

export interface ConferenceStack {
  p: Platform;
  t: TestApp;
  f: Fixture;
}

export interface ConferenceApi {
  get(url: string): request.Test;
  post(url: string, body?: object): request.Test;
  put(url: string, body: object): request.Test;
  del(url: string, body?: object): request.Test;
}

/**
 * Before the suite: (the tables truncated when `truncate`), the platform on `mediaServer` (default the
 * engine), the app, the customer and its trunk (named `trunk` and a time). After it: sipp, `parties`,
 * the app and the platform. Returns the customer's /v1.0 requests (its access key).
 */
export function useConferenceStack(opts: { trunk: string; mediaServer?: 'embedded' | 'fsmrf'; truncate?: boolean; parties: RtpParty[] }, ready: (s: ConferenceStack) => void): () => ConferenceApi {
  let s: ConferenceStack | undefined;
  before(async () => {
    if (opts.truncate) await truncateAll();
    const p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }, opts.mediaServer ? { mediaServer: opts.mediaServer } : {});
    const t = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir } });
    s = { p, t, f: await createFixture(t.ctx) };
    await trunksRepo(await testDb()).create(s.f.customer.id, `${opts.trunk}${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    ready(s);
  });
  after(async () => {
    killAllSipp();
    for (const x of opts.parties) x.close();
    await s?.t.close();
    await s?.p.close();
  });
  return () => {
    if (!s) throw new Error('the conference stack is not started');
    const { t, f } = s;
    const q = <T extends request.Test>(r: T, body?: object) => (body === undefined ? r : r.send(body)).query({ accesskey: f.accesskey });
    return {
      get: (url) => q(request(t.app).get(`/v1.0${url}`)),
      post: (url, body) => q(request(t.app).post(`/v1.0${url}`), body),
      put: (url, body) => q(request(t.app).put(`/v1.0${url}`), body),
      del: (url, body) => q(request(t.app).delete(`/v1.0${url}`), body),
    };
  };
}

/** The room's row once it is terminated (10 s; `what` names the wait). */
export async function terminatedRoom(id: string, what = 'terminated'): Promise<ConferenceRow> {
  const db = await testDb();
  return until(
    async () => {
      const r = await db('conferences').where({ id }).first();
      return r?.status === 'terminated' ? r : null;
    },
    10_000,
    what,
  );
}
