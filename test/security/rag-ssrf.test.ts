/**
 * Finding 1: a RAG's source_urls fetched anything (the platform's own metrics, cloud metadata,
 * Redis/Postgres ports as a port-scan oracle through status_message). Through the real API, with a
 * real loopback HTTP server playing the internal service: every spelling of "this machine" is
 * refused at create (400 naming the field) or at ingest (status error with a message that leaks
 * nothing), and the internal server never sees a request. An allowlisted server still works.
 * Only loopback URLs go through the API here (a regression would fetch them); metadata, private
 * and other ranges are refused by the same check, tested as pure functions in egress-policy.test.ts.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { until } from '../../testkit/media-app/harness';
import { startInternalTargets, SPELLINGS, DNS_NAMES, type InternalTargets } from './spellings';

interface Source {
  source_url: string;
  status: string;
  status_message: string;
}

describe('security: RAG source_urls cannot reach internal addresses (finding 1)', function () {
  this.timeout(60_000);
  let targets: InternalTargets;
  let t: TestApp;
  let f: Fixture;
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${f.token}`);

  before(async () => {
    targets = await startInternalTargets();
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', ...targets.env } });
    f = await createFixture(t.ctx);
  });
  after(async () => {
    await t?.close();
    await targets?.close();
  });
  afterEach(() => expect(targets.internalHits(), 'the internal server was reached').to.equal(0));

  /** Creates a RAG with one URL; returns the 400 body, or the source once ingestion finished. */
  async function tryUrl(url: string): Promise<{ rejected: { status: number; body: { error: { reason: string; message: string; details?: { field: string }[] } } } } | { source: Source }> {
    const r = await auth(request(t.app).post('/v1.0/rags')).send({ name: 's', source_urls: [url] });
    if (r.status !== 200) return { rejected: { status: r.status, body: r.body } };
    const source = await until(
      async () => {
        const g = (await auth(request(t.app).get(`/v1.0/rags/${r.body.id}`))).body as { sources: Source[] };
        return g.sources[0]!.status !== 'pending' ? g.sources[0]! : null;
      },
      20_000,
      'source ingested',
    );
    return { source };
  }

  it('the reported request (http://127.0.0.1:<port>/metrics) is refused at create with 400 naming source_urls', async () => {
    const r = await auth(request(t.app).post('/v1.0/rags')).send({ name: 's', source_urls: [`http://127.0.0.1:${targets.port}/metrics`] });
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body.error.reason).to.equal('INVALID_ARGUMENT');
    expect(r.body.error.message).to.equal("source_urls.0: the URL's host is a loopback address, which is not allowed");
    expect(r.body.error.details).to.deep.equal([{ field: 'source_urls.0', issue: "the URL's host is a loopback address, which is not allowed" }]);
  });

  it('adding a source to an existing RAG is checked the same way', async () => {
    const rag = await auth(request(t.app).post('/v1.0/rags')).send({ name: 'kb' }).expect(200);
    const r = await auth(request(t.app).post(`/v1.0/rags/${rag.body.id}/sources`)).send({ source_urls: [`http://2130706433:${targets.port}/`] });
    expect(r.status).to.equal(400);
    expect(r.body.error.details[0].field).to.equal('source_urls.0');
    // an allowed (loopback) host, so only the credentials make it wrong
    const bad = await auth(request(t.app).post(`/v1.0/rags/${rag.body.id}/sources`)).send({ source_urls: [`http://user:pw@127.0.0.2:${targets.port}/doc`] });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.match(/user name or password/);
  });

  for (const s of SPELLINGS) {
    it(`${s.kind}: ${s.label}`, async () => {
      targets.resetRebind();
      const out = await tryUrl(s.url(targets));
      if ('rejected' in out) {
        expect(out.rejected.status).to.equal(400);
        expect(out.rejected.body.error.reason).to.equal('INVALID_ARGUMENT');
        expect(out.rejected.body.error.details?.[0]?.field).to.equal('source_urls.0');
        expect(s.kind, 'only literals are known at create time').to.equal('literal');
        return;
      }
      expect(JSON.stringify(out.source)).to.not.include(targets.secret);
      if (s.refused) {
        expect(out.source.status).to.equal('error');
        expect(out.source.status_message).to.match(/^fetch refused: /);
        expect(out.source.status_message).to.not.match(/127\.0\.0\.1|::1|\d+\.\d+\.\d+\.\d+/);
      } else {
        // rebinding: the first answer (the allowed server) was pinned; the internal one never asked
        expect(out.source.status, out.source.status_message).to.equal('ready');
      }
    });
  }

  it('status_message is no port-scan oracle: a closed port and a port that resets read the same', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.2', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const reset = net.createServer((sock) => sock.resetAndDestroy());
    await new Promise<void>((r) => reset.listen(0, '127.0.0.2', r));
    try {
      const a = await tryUrl(`http://127.0.0.2:${closedPort}/`);
      const b = await tryUrl(`http://127.0.0.2:${(reset.address() as AddressInfo).port}/`);
      expect('source' in a && 'source' in b).to.equal(true);
      const [sa, sb] = [(a as { source: Source }).source, (b as { source: Source }).source];
      expect(sa.status).to.equal('error');
      expect(sa.status_message).to.equal(sb.status_message);
      expect(sa.status_message).to.equal('fetch failed: the server could not be reached or did not answer in time');
    } finally {
      reset.close();
    }
  });

  it('an allowlisted server (EGRESS_ALLOW_CIDRS=127.0.0.2/32), by address or by name, is ingested', async () => {
    for (const u of [`${targets.allowedUrl}/doc`, `http://${DNS_NAMES.allowed}:${targets.port}/doc`]) {
      const out = await tryUrl(u);
      expect('source' in out, u).to.equal(true);
      const s = (out as { source: Source }).source;
      expect(s.status, s.status_message).to.equal('ready');
      expect(s.status_message).to.match(/1 chunk created/);
    }
  });
});
