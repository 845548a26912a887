/**
 * Issue 32 item 14: customer bytes are never served as active content from the platform's origin.
 * Every route that streams a customer's file (storage files with credentials and by signed URL, the
 * agent's files, recording files) answers with Content-Disposition: attachment (an ASCII fallback
 * and the exact UTF-8 name, RFC 6266 / 8187), X-Content-Type-Options: nosniff, a sandboxing CSP and
 * a passive Content-Type. Real control-api (supertest), Postgres, local storage on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, type Fixture, type TestApp } from '../../testkit/api';
import { newId } from '../../core/ids';
import { attachmentDisposition, passiveContentType } from '../../control-api/customer-file';
import { insertRecording } from '../../testkit/recordings';

const ACTIVE: Array<{ filename: string; contentType: string; body: string }> = [
  { filename: 'page.html', contentType: 'text/html', body: '<script>parent.postMessage(document.cookie,"*")</script>' },
  { filename: 'logo.svg', contentType: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>' },
  { filename: 'app.js', contentType: 'application/javascript', body: 'fetch("/v1.0/accesskeys",{method:"POST"})' },
  { filename: 'feed.xml', contentType: 'text/xml', body: '<x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script>' },
];

/** The safety headers every customer file answer carries. */
function expectInert(res: request.Response, what: string): void {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(200);
  expect(res.headers['x-content-type-options'], what).to.equal('nosniff');
  expect(res.headers['content-security-policy'], what).to.equal("default-src 'none'; sandbox");
  expect(res.headers['content-disposition'], what).to.match(/^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9!#$&+\-.^_`|~%]+$/);
}

describe('security: customer files are served inert (issue 32 item 14)', function () {
  this.timeout(30_000);
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));

  const upload = async (filename: string, contentType: string, body: string, route = '/v1.0/storage_files') => {
    const r = await request(t.app).post(route).query({ accesskey: f.accesskey }).attach('file', Buffer.from(body), { filename, contentType });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as { id: string; uri_download: string };
  };

  for (const file of ACTIVE) {
    it(`${file.filename} (${file.contentType}): an attachment of type application/octet-stream on every download route`, async () => {
      const up = await upload(file.filename, file.contentType, file.body);
      const withKey = await request(t.app).get(`/v1.0/storage_files/${up.id}/file`).query({ accesskey: f.accesskey });
      expectInert(withKey, 'storage_files/{id}/file');
      expect(withKey.headers['content-type']).to.equal('application/octet-stream');
      expect(withKey.headers['content-disposition']).to.equal(`attachment; filename="${file.filename}"; filename*=UTF-8''${file.filename}`);

      const listed = await request(t.app).get(`/v1.0/storage_files/${up.id}`).query({ accesskey: f.accesskey });
      const signed = new URL(listed.body.uri_download as string);
      const bySignature = await request(t.app).get(`${signed.pathname}${signed.search}`);
      expectInert(bySignature, 'storagefiles signed URL');
      expect(bySignature.headers['content-type']).to.equal('application/octet-stream');
    });
  }

  it("the agent's own files route too", async () => {
    const r = await request(t.app)
      .post('/v1.0/service_agents/files')
      .set('Authorization', `Bearer ${f.token}`)
      .attach('file', Buffer.from('<html><script>alert(1)</script>'), { filename: 'note.html', contentType: 'text/html' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const dl = await request(t.app).get(`/v1.0/service_agents/files/${r.body.id}/file`).set('Authorization', `Bearer ${f.token}`);
    expectInert(dl, 'service_agents/files/{id}/file');
    expect(dl.headers['content-type']).to.equal('application/octet-stream');
  });

  it('a passive type keeps its type (a PDF, an image) and stays an inert attachment', async () => {
    const up = await upload('scan.png', 'image/png', '\x89PNG\r\n');
    const dl = await request(t.app).get(`/v1.0/storage_files/${up.id}/file`).query({ accesskey: f.accesskey });
    expectInert(dl, 'png');
    expect(dl.headers['content-type']).to.equal('image/png');
  });

  it('names with quotes, percent signs and non-Latin letters: an ASCII fallback and the exact name (RFC 8187)', async () => {
    const name = 'Q3 "report" 100% 日本語 ü (final)*.html';
    // the JSON form of the upload carries the name exactly (multipart clients re-encode quotes)
    const r = await request(t.app)
      .post('/v1.0/storage_files')
      .query({ accesskey: f.accesskey })
      .send({ filename: name, content: Buffer.from('<b>x</b>').toString('base64'), content_type: 'text/html' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const up = r.body as { id: string };
    const dl = await request(t.app).get(`/v1.0/storage_files/${up.id}/file`).query({ accesskey: f.accesskey });
    expectInert(dl, 'odd name');
    const cd = String(dl.headers['content-disposition']);
    expect(cd).to.equal('attachment; filename="Q3 _report_ 100_ ___ _ (final)*.html"; ' + "filename*=UTF-8''Q3%20%22report%22%20100%25%20%E6%97%A5%E6%9C%AC%E8%AA%9E%20%C3%BC%20%28final%29%2A.html");
    const exact = decodeURIComponent(/filename\*=UTF-8''(.+)$/.exec(cd)![1]!);
    expect(exact).to.equal(name);
  });

  it('recording files: audio/wav, an inert attachment', async () => {
    const id = newId();
    const filename = `${id}_in.wav`;
    const dir = path.join(t.ctx.config.dataDir, 'recordings');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, filename), Buffer.from('RIFF\0\0\0\0WAVE'));
    await insertRecording(t.ctx.db, f.customer.id, id, filename, { tm_start: new Date(Date.now() - 1000), tm_end: new Date() });
    const pf = await request(t.app).get(`/v1.0/recordings/${id}/playfiles`).query({ accesskey: f.accesskey });
    expect(pf.status, JSON.stringify(pf.body)).to.equal(200);
    const u = new URL(pf.body[0].uri_download as string);
    const dl = await request(t.app).get(`${u.pathname}${u.search}`);
    expectInert(dl, 'recordingfiles');
    expect(dl.headers['content-type']).to.equal('audio/wav');
  });

  it('the helpers: active and malformed types become application/octet-stream; empty and control-character names are made safe', () => {
    for (const ty of ['text/html; charset=utf-8', 'image/svg+xml', 'application/xhtml+xml', 'text/javascript', 'application/x-shockwave-flash', 'text/css', 'nonsense', '']) {
      expect(passiveContentType(ty), ty).to.equal('application/octet-stream');
    }
    for (const ty of ['audio/wav', 'audio/mpeg', 'video/mp4', 'image/jpeg', 'application/pdf', 'text/plain']) expect(passiveContentType(ty), ty).to.equal(ty);
    expect(attachmentDisposition('')).to.equal(`attachment; filename="download"; filename*=UTF-8''download`);
    expect(attachmentDisposition('a\\b.txt')).to.equal(`attachment; filename="a_b.txt"; filename*=UTF-8''a%5Cb.txt`);
    expect(attachmentDisposition('a\r\nSet-Cookie: x=1.txt')).to.equal(`attachment; filename="aSet-Cookie: x=1.txt"; filename*=UTF-8''aSet-Cookie%3A%20x%3D1.txt`);
  });
});
