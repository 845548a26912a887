import { expect } from 'chai';
import request from 'supertest';
import { newId } from '../../core/ids';
import { startRig, team, expectError, type Rig, type Team } from './support';
import { bufferBody } from '../../testkit/buffer-body';

describe('service-agent API: files', function () {
  this.timeout(60_000);
  let rig: Rig;
  let tm: Team;
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  const sa = (method: 'get' | 'post' | 'delete', path: string, token = tm.a.token) => request(rig.t.app)[method](`/v1.0/service_agents${path}`).set(bearer(token));

  before(async () => {
    rig = await startRig();
    tm = await team(rig);
  });
  after(async () => rig.close());

  it('an agent uploads a talk file, lists, reads, downloads and deletes it; another agent gets 404', async () => {
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
    const up = await sa('post', '/files').field('type', 'talk').field('name', 'diagram').attach('file', bytes, { filename: 'plan.bin', contentType: 'application/octet-stream' });
    expect(up.status, JSON.stringify(up.body)).to.equal(200);
    expect(up.body).to.include({ owner_type: 'agent', owner_id: tm.a.id, type: 'talk', name: 'diagram', filename: 'plan.bin', filesize: 3000 });
    const id = up.body.id;

    expect((await sa('get', '/files')).body.result.map((f: { id: string }) => f.id)).to.deep.equal([id]);
    expect((await sa('get', `/files/${id}`)).body.id).to.equal(id);
    const dl = await sa('get', `/files/${id}/file`).buffer(true).parse(bufferBody);
    expect(dl.status).to.equal(200);
    expect(Buffer.compare(dl.body as Buffer, bytes)).to.equal(0);

    // Agent b: not its file.
    expect((await sa('get', '/files', tm.b.token)).body.result).to.deep.equal([]);
    expectError(await sa('get', `/files/${id}`, tm.b.token), 404, 'FILE_NOT_FOUND');
    expectError(await sa('get', `/files/${id}/file`, tm.b.token), 404, 'FILE_NOT_FOUND');
    expectError(await sa('delete', `/files/${id}`, tm.b.token), 404, 'FILE_NOT_FOUND');

    expect((await sa('delete', `/files/${id}`)).body.tm_delete).to.not.equal('9999-01-01 00:00:00.000000');
    expectError(await sa('get', `/files/${id}`), 404, 'FILE_NOT_FOUND');
    expectError(await sa('get', `/files/${id}/file`), 404, 'FILE_NOT_FOUND');
    expectError(await sa('get', `/files/${newId()}`), 404, 'FILE_NOT_FOUND');
  });

  it('refuses bad uploads in the error envelope and keeps nothing of them', async () => {
    expectError(await sa('post', '/files').send({ filename: 'x', content: 'AAAA' }), 400, 'INVALID_ARGUMENT');
    expectError(await sa('post', '/files').field('type', 'rag').attach('file', Buffer.from('x'), 'a.txt'), 400, 'INVALID_ARGUMENT');
    expectError(await sa('post', '/files').field('color', 'red').attach('file', Buffer.from('x'), 'a.txt'), 400, 'INVALID_ARGUMENT');
    expectError(await sa('post', '/files').field('name', 'nofile'), 400, 'INVALID_ARGUMENT');
    expectError(await sa('post', '/files').attach('file', Buffer.alloc(0), 'empty.txt'), 400, 'INVALID_ARGUMENT');
    expect((await sa('get', '/files')).body.result).to.deep.equal([]);
    const ak = await request(rig.t.app).get('/v1.0/service_agents/files').query({ accesskey: tm.f.accesskey });
    expectError(ak, 403, 'DIRECT_ACCESS_NOT_SUPPORTED');
  });
});
