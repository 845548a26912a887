// /storage_files through S3: uploads land in the bucket (signed requests the server verifies),
// downloads stream back (with credentials and through the signed URL), deletes remove the object.
// A wrong secret and a store that is down answer 503 in the error envelope and change nothing.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { configureStorage, FILES_PREFIX } from '../../core/storage/backend';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { bufferBody } from '../../testkit/buffer-body';

describe('storage files on S3', function () {
  this.timeout(20_000);
  let t: TestApp;
  let f: Fixture;
  let s3: S3TestServer;
  let dataDir: string;
  const settings = (over: { secretAccessKey?: string } = {}) => s3.settings(over);
  before(async function () {
    this.timeout(120_000); // the first use of the test database creates and migrates it
    s3 = await startS3Server();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-files-'));
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', DATA_DIR: dataDir } });
    configureStorage(t.ctx.config, settings());
    f = await createFixture(t.ctx);
  });
  afterEach(() => configureStorage(t.ctx.config, settings()));
  after(async () => {
    configureStorage(t.ctx.config, null);
    await t.close();
    await s3.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const api = (method: 'get' | 'post' | 'delete', p: string) => request(t.app)[method](`/v1.0${p}`).query({ accesskey: f.accesskey });
  const bytes = crypto.randomBytes(70_000);

  async function upload(name = 'blob.bin') {
    const r = await api('post', '/storage_files').attach('file', bytes, { filename: name, contentType: 'application/octet-stream' }).field('name', 'a blob');
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as { id: string; uri_download: string; filesize: number };
  }

  it('upload (multipart and JSON), download with credentials and through the signed URL, delete', async () => {
    const file = await upload();
    expect(file.filesize).to.equal(bytes.length);
    const key = `${FILES_PREFIX}${f.customer.id}/${file.id}`;
    expect(s3.objects.get(key)?.body.equals(bytes), 'object in the bucket').to.equal(true);
    expect(s3.log).to.include(`PUT ${key} 200`);

    const direct = await api('get', `/storage_files/${file.id}/file`).buffer(true).parse(bufferBody);
    expect(direct.status).to.equal(200);
    expect((direct.body as Buffer).equals(bytes)).to.equal(true);
    const u = new URL(file.uri_download);
    const signed = await request(t.app)
      .get(u.pathname + u.search)
      .buffer(true)
      .parse(bufferBody);
    expect(signed.status).to.equal(200);
    expect((signed.body as Buffer).equals(bytes)).to.equal(true);

    const json = await api('post', '/storage_files').send({ filename: 'j.txt', content: Buffer.from('json upload').toString('base64'), content_type: 'text/plain' });
    expect(json.status).to.equal(200);
    expect(s3.objects.get(`${FILES_PREFIX}${f.customer.id}/${json.body.id}`)?.body.toString()).to.equal('json upload');

    expect((await api('delete', `/storage_files/${file.id}`)).status).to.equal(200);
    expect(s3.objects.has(key), 'object deleted').to.equal(false);
    expect(s3.log).to.include(`DELETE ${key} 204`);
    expect((await api('get', `/storage_files/${file.id}`)).status).to.equal(404);
  });

  it('a wrong secret: 503 SERVICE_UNAVAILABLE naming the refusal; no row, no object', async () => {
    const before = (await api('get', '/storage_files')).body.result.length as number;
    configureStorage(t.ctx.config, settings({ secretAccessKey: 'wrong-secret' }));
    const r = await api('post', '/storage_files').send({ filename: 'w.txt', content: Buffer.from('w').toString('base64') });
    expect(r.status).to.equal(503);
    expect(r.body.error).to.include({ reason: 'SERVICE_UNAVAILABLE', status: 'UNAVAILABLE' });
    expect(r.body.error.message).to.contain('SignatureDoesNotMatch');
    expect(r.body.error.details[0]).to.deep.equal({ storage_error: 'SignatureDoesNotMatch' });
    expect((await api('get', '/storage_files')).body.result.length).to.equal(before);
  });

  it('S3 down: upload, download and delete answer 503; the accepted file stays listed and is whole afterwards', async () => {
    const file = await upload('kept.bin');
    const key = `${FILES_PREFIX}${f.customer.id}/${file.id}`;
    await s3.pause();
    try {
      const up = await api('post', '/storage_files').send({ filename: 'd.txt', content: Buffer.from('d').toString('base64') });
      expect(up.status).to.equal(503);
      expect(up.body.error.reason).to.equal('SERVICE_UNAVAILABLE');
      expect(up.body.error.message).to.match(/unreachable/);
      const down = await api('get', `/storage_files/${file.id}/file`);
      expect(down.status).to.equal(503);
      expect(down.body.error.reason).to.equal('SERVICE_UNAVAILABLE');
      const del = await api('delete', `/storage_files/${file.id}`);
      expect(del.status).to.equal(503);
      const listed = await api('get', `/storage_files/${file.id}`);
      expect(listed.status, 'the row survives a refused delete').to.equal(200);
      expect((await api('get', '/storage_files')).body.result.map((x: { filename: string }) => x.filename)).to.not.include('d.txt');
    } finally {
      await s3.resume();
    }
    expect(s3.objects.get(key)?.body.equals(bytes)).to.equal(true);
    const again = await api('get', `/storage_files/${file.id}/file`);
    expect(again.status).to.equal(200);
    expect((await api('delete', `/storage_files/${file.id}`)).status).to.equal(200);
    expect(s3.objects.has(key)).to.equal(false);
  });
});
