/**
 * The served /v1.0/openapi.json is a valid OpenAPI 3 document: structure (the OpenAPI JSON schema)
 * and the rules a schema cannot express (unique parameters per location, unique operationIds,
 * path placeholders declared as path parameters), as checked by @readme/openapi-parser.
 */
import { expect } from 'chai';
import request from 'supertest';
import { validate, compileErrors } from '@readme/openapi-parser';
import { buildTestApp, type TestApp } from '../../testkit/api';

describe('conformance: the served openapi.json validates as OpenAPI 3', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
  });
  after(async () => t.close());

  it('has no validation error and no warning', async () => {
    const res = await request(t.app).get('/v1.0/openapi.json');
    expect(res.status).to.equal(200);
    const result = await validate(res.body);
    expect(result.valid, result.valid ? '' : compileErrors(result)).to.equal(true);
    expect(result.warnings.map((w) => w.message)).to.deep.equal([]);
  });
});
