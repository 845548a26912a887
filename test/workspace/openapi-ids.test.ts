import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../testkit/api';

describe('openapi.json: the /service-agents alias spelling keeps operationIds unique', function () {
  this.timeout(30_000);
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
  });
  after(async () => t.close());

  it('every operationId is unique; an alias gets the suffix', async () => {
    const doc = (await request(t.app).get('/v1.0/openapi.json')).body as { paths: Record<string, Record<string, { operationId: string }>> };
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    expect(ids.length).to.be.greaterThan(100);
    expect(new Set(ids).size).to.equal(ids.length);
    expect(doc.paths['/service_agents/files']!.post!.operationId).to.equal('postServiceAgentsFiles');
    expect(doc.paths['/service-agents/files']!.post!.operationId).to.equal('postServiceAgentsFilesAlias');
  });
});
