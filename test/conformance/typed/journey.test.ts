/**
 * A third-party client generated from the reference document drives the platform over real HTTP:
 * a customer's first day (its account, a flow made, read, changed and deleted, an extension, a
 * virtual number, the call list) and the errors such a client must be able to read. The request
 * shapes are the reference's (compile time); each 2xx body is validated against the reference
 * schema and each error is the spec's envelope (run time).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../../testkit/api';
import { truncateAll } from '../../../testkit/db';
import { Reference, describeErrors } from '../reference';
import { referenceClient, type ReferenceClient } from './client';

const ref = new Reference();

function conforms(op: string, status: number, body: unknown): void {
  const v = ref.validator(op, String(status));
  expect(v, `${op} ${status}: no reference schema`).to.not.equal(null);
  expect(v!(body), `${op}: ${describeErrors(v!.errors)}`).to.equal(true);
}

describe('conformance: a client generated from the reference document', function () {
  this.timeout(30_000);
  let t: TestApp;
  let f: Fixture;
  let server: http.Server;
  let api: ReferenceClient;

  before(async () => {
    await truncateAll();
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', SIP_DOMAIN: 'sip.example.test' } });
    f = await createFixture(t.ctx);
    server = http.createServer(t.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    api = referenceClient(`http://127.0.0.1:${(server.address() as { port: number }).port}/v1.0`, f.token);
  });
  after(async () => {
    server?.close();
    await t?.close();
  });

  it('reads its customer, makes, reads, changes and deletes a flow', async () => {
    const me = await api.GET('/customer');
    expect(me.response.status).to.equal(200);
    conforms('get /customer', 200, me.data);
    expect(me.data?.id).to.equal(f.customer.id);

    const made = await api.POST('/flows', {
      body: {
        name: 'first',
        detail: 'made by a generated client',
        actions: [
          { id: randomUUID(), type: 'answer' },
          { id: randomUUID(), type: 'talk', option: { text: 'hello', language: 'en-US' } },
        ],
      },
    });
    expect(made.response.status, JSON.stringify(made.error)).to.equal(200);
    conforms('post /flows', 200, made.data);
    const id = made.data!.id!;

    const read = await api.GET('/flows/{id}', { params: { path: { id } } });
    conforms('get /flows/{id}', 200, read.data);
    expect(read.data?.actions?.map((a) => a.type)).to.deep.equal(['answer', 'talk']);

    const changed = await api.PUT('/flows/{id}', { params: { path: { id } }, body: { name: 'renamed', detail: 'd', actions: [{ id: randomUUID(), type: 'hangup' }] } });
    conforms('put /flows/{id}', 200, changed.data);
    expect(changed.data?.name).to.equal('renamed');

    const gone = await api.DELETE('/flows/{id}', { params: { path: { id } } });
    conforms('delete /flows/{id}', 200, gone.data);
    const after = await api.GET('/flows/{id}', { params: { path: { id } } });
    expect(after.response.status).to.equal(404);
  });

  it('creates an extension and a virtual number, and lists them and its calls', async () => {
    const ext = await api.POST('/extensions', { body: { extension: '2001', password: 'secret-pass-2001', name: 'desk', detail: 'front desk' } });
    expect(ext.response.status, JSON.stringify(ext.error)).to.equal(200);
    conforms('post /extensions', 200, ext.data);
    const list = await api.GET('/extensions', { params: { query: { page_size: 10 } } });
    conforms('get /extensions', 200, list.data);
    expect(list.data?.result?.map((e) => e.extension)).to.include('2001');

    const number = await api.POST('/numbers', { body: { number: '+899100200300', type: 'virtual', call_flow_id: '', message_flow_id: '', name: 'test line', detail: '' } });
    // the reference makes call_flow_id and message_flow_id required: a client with no flow sends ''
    expect(number.response.status, JSON.stringify(number.error)).to.equal(200);
    conforms('post /numbers', 200, number.data);
    expect(number.data?.call_flow_id).to.equal('00000000-0000-0000-0000-000000000000');

    const calls = await api.GET('/calls', { params: { query: { page_size: 5 } } });
    conforms('get /calls', 200, calls.data);
    expect(calls.data?.result).to.deep.equal([]);
  });

  it('reads the errors: a bad body, an unknown id, no credential', async () => {
    const bad = await api.POST('/extensions', { body: { extension: '', password: 'x', name: 'n', detail: 'd' } });
    expect(bad.response.status).to.equal(400);
    // the spec's envelope: status, reason, message, request_id, details naming the field
    expect(bad.error).to.have.nested.property('error.reason', 'INVALID_ARGUMENT');
    expect(bad.error).to.have.nested.property('error.request_id').that.is.a('string');
    const unknown = await api.GET('/flows/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
    expect(unknown.response.status).to.equal(404);
    const anonymous = referenceClient(`http://127.0.0.1:${(server.address() as { port: number }).port}/v1.0`, 'not-a-token');
    const denied = await anonymous.GET('/customer');
    expect(denied.response.status).to.equal(401);
  });
});
