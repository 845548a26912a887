import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, createFixture, type TestApp, type Fixture } from '../../../testkit/api';
import { clock } from '../../../core/clock';
import { bufferBody } from '../../../testkit/buffer-body';

const binary = (r: request.Test) => r.buffer(true).parse(bufferBody);

describe('storage account and /storage_files', function () {
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));
  const api = (m: 'get' | 'post' | 'delete', p: string, who: Fixture = f) => request(t.app)[m](`/v1.0${p}`).query({ accesskey: who.accesskey });

  it('uploads, lists, downloads (credentials and signed URL), counts usage, deletes', async () => {
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256));
    const up = await api('post', '/storage_files').send({ filename: 'a.bin', content: bytes.toString('base64'), name: 'blob' });
    expect(up.status).to.equal(200);
    expect(up.body).to.include({ filename: 'a.bin', filesize: 3000, name: 'blob' });
    const id = up.body.id as string;
    expect((await api('get', '/storage_files')).body.result.map((x: { id: string }) => x.id)).to.include(id);
    const acct = await api('get', '/storage_account');
    expect(acct.body).to.include({ total_file_count: 1, total_file_size: 3000 });

    const dl = await binary(api('get', `/storage_files/${id}/file`));
    expect(dl.status).to.equal(200);
    expect(Buffer.compare(dl.body as Buffer, bytes)).to.equal(0);
    const u = new URL(up.body.uri_download as string);
    const signed = await binary(request(t.app).get(u.pathname + u.search));
    expect(signed.status).to.equal(200);
    expect(Buffer.compare(signed.body as Buffer, bytes)).to.equal(0);
    clock.setNow(Date.now() + 3 * 3600 * 1000);
    expect((await request(t.app).get(u.pathname + u.search)).status).to.equal(403);
    clock.reset();

    const other = await createFixture(t.ctx);
    expect((await api('get', `/storage_files/${id}`, other)).status).to.equal(404);
    expect((await api('get', `/storage_files/${id}/file`, other)).status).to.equal(404);

    expect((await api('delete', `/storage_files/${id}`)).status).to.equal(200);
    expect((await api('get', `/storage_files/${id}`)).status).to.equal(404);
    expect((await api('get', '/storage_account')).body.total_file_size).to.equal(0);
  });

  it('refuses uploads over the quota and bad input', async () => {
    const g = await createFixture(t.ctx);
    await t.ctx.db('storage_accounts').insert({ id: crypto.randomUUID(), customer_id: g.customer.id, quota_bytes: 5000, tm_create: new Date() });
    const chunk = Buffer.alloc(3000, 1).toString('base64');
    expect((await api('post', '/storage_files', g).send({ filename: 'x', content: chunk })).status).to.equal(200);
    const over = await api('post', '/storage_files', g).send({ filename: 'y', content: chunk });
    expect(over.status).to.equal(409);
    expect(over.body.error.message).to.match(/quota/);
    for (const body of [{}, { filename: 'a/b', content: 'AA==' }, { filename: 'a', content: '!!' }, { filename: 'a', content: '' }, { filename: 'a', content: 'AA==', extra: 1 }]) {
      expect((await api('post', '/storage_files', g).send(body)).status, JSON.stringify(body)).to.equal(400);
    }
    expect((await api('get', '/storage_files/nope')).status).to.equal(400);
    expect((await request(t.app).get(`/v1.0/storagefiles/${crypto.randomUUID()}?expires=1&signature=x`)).status).to.equal(403);
  });
});
