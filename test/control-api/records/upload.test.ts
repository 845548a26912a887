// POST /storage_files as multipart/form-data (voipbin's form): the file arrives byte for byte, its
// fields are kept, and every malformed upload is refused in the envelope without leaving a file.
import { expect } from 'chai';
import http from 'node:http';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../../testkit/api';
import { storageRoot } from '../../../core/storage/local';
import fs from 'node:fs';
import { bufferBody } from '../../../testkit/buffer-body';

describe('multipart upload to /storage_files', function () {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    f = await createFixture(t.ctx);
  });
  after(() => t.close());
  const post = () => request(t.app).post('/v1.0/storage_files').query({ accesskey: f.accesskey });
  const objects = () => {
    const dir = `${storageRoot(t.ctx.config.dataDir)}/${f.customer.id}`;
    return fs.existsSync(dir) ? fs.readdirSync(dir).length : 0;
  };

  it('stores the file part byte for byte with its type, name and content type; downloads it back', async () => {
    const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7) % 256));
    const r = await post().field('type', 'rag').field('name', 'manual').attach('file', bytes, { filename: 'C:\\docs\\manual.pdf', contentType: 'application/pdf' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({ filename: 'manual.pdf', filesize: 200_000, name: 'manual', type: 'rag' });
    const dl = await request(t.app).get(`/v1.0/storage_files/${r.body.id}/file`).query({ accesskey: f.accesskey }).buffer(true).parse(bufferBody);
    expect(dl.status).to.equal(200);
    expect(dl.headers['content-type']).to.match(/application\/pdf/);
    expect(Buffer.compare(dl.body as Buffer, bytes)).to.equal(0);
  });

  it('refuses bad uploads in the envelope and keeps nothing of them', async () => {
    const before = objects();
    const cases: [string, request.Test, number, RegExp][] = [
      ['no file part', post().field('type', 'rag'), 400, /no file part named "file"/],
      ['empty file', post().attach('file', Buffer.alloc(0), 'empty.txt'), 400, /empty/],
      ['file under another name', post().attach('document', Buffer.from('x'), 'a.txt'), 400, /unexpected file part/],
      ['two files', post().attach('file', Buffer.from('x'), 'a.txt').attach('file', Buffer.from('y'), 'b.txt'), 400, /only one file/],
      ['unknown field', post().field('colour', 'red').attach('file', Buffer.from('x'), 'a.txt'), 400, /colour/],
      ['bad type field', post().field('type', 'Not A Type!').attach('file', Buffer.from('x'), 'a.txt'), 400, /type/],
      ['not multipart nor JSON', post().set('Content-Type', 'text/plain').send('hello'), 400, /application\/json/],
      ['multipart without boundary', post().set('Content-Type', 'multipart/form-data').send('--x\r\n'), 400, /boundary/],
    ];
    for (const [what, req, status, message] of cases) {
      const r = await req;
      expect(r.status, what).to.equal(status);
      expect(r.body.error?.reason, what).to.be.a('string');
      expect(r.body.error.message, what).to.match(message);
    }
    expect(objects()).to.equal(before);
    const list = await request(t.app).get('/v1.0/storage_files').query({ accesskey: f.accesskey });
    expect(list.body.result.every((x: { filename: string }) => x.filename === 'manual.pdf')).to.equal(true);
  });

  it('a truncated multipart body is an error, not a stored file', async () => {
    const addr = await new Promise<{ port: number; server: http.Server }>((resolve) => {
      const server = http.createServer(t.app).listen(0, '127.0.0.1', () => resolve({ port: (server.address() as { port: number }).port, server }));
    });
    try {
      const before = objects();
      const body = '--BOUND\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\npartial data without the closing boundary';
      const res = await fetch(`http://127.0.0.1:${addr.port}/v1.0/storage_files?accesskey=${f.accesskey}`, {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=BOUND' },
        body,
      });
      expect(res.status).to.equal(400);
      const j = (await res.json()) as { error: { reason: string; message: string } };
      expect(j.error.message).to.match(/malformed multipart|no file part/);
      expect(objects()).to.equal(before);
    } finally {
      addr.server.close();
    }
  });
});
