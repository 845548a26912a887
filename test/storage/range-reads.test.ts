// A Range request of a customer file (control-api/customer-file.ts, core/storage/range.ts: eval call audio,
// recordings) is ONE read of the store: a ranged read that says the file's size too, never a read for the
// size and another for the bytes. Against the real stores the tests use: files on local disk and the S3
// stand-in (test/support/s3-server.ts: a Range GET answered 206 with Content-Range, 416 past the end); a
// bucket that ignores Range (answers 200 whole) is still one read, the bytes cut on the way.
import { expect } from 'chai';
import express from 'express';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { sendCustomerFileRanges } from '../../control-api/customer-file';
import { ApiError } from '../../core/errors';
import { LocalObjectStore, type ObjectStore } from '../../core/storage/local';
import { S3Client, S3ObjectStore } from '../../core/storage/s3';
import { startS3Server, type S3TestServer } from '../support/s3-server';

const DATA = Buffer.from(Array.from({ length: 10_000 }, (_, i) => (i * 7) % 256));
const KEY = 'cust/run/call.wav';

/** An app answering GET /f from `store`, counting the store's reads. */
function appOf(store: ObjectStore): { app: express.Express; reads: () => number } {
  let reads = 0;
  const app = express();
  app.get('/f', (req, res) => {
    sendCustomerFileRanges(req, res, { filename: 'call.wav', contentType: 'audio/wav' }, (range) => {
      reads++;
      return store.get(KEY, range);
    }).then(
      (found) => void (found || res.status(404).end()),
      (e: Error) =>
        void (e instanceof ApiError
          ? res
              .status(e.http)
              .set(e.headers ?? {})
              .json({ reason: e.reason })
          : res.status(500).end(e.message)),
    );
  });
  return { app, reads: () => reads };
}

const bytes = (r: request.Response) => r.body as Buffer;
const raw = (res: request.Response, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

/** Each request: one get() of the store and (`requests`: what the store counts itself) one request to it. */
async function oneReadEach(store: ObjectStore, requests: (() => number) | null): Promise<void> {
  const { app, reads } = appOf(store);
  const count = requests ?? (() => 0);
  /** store reads and requests to it since `before` */
  const since = (before: number[]) => (requests ? [reads() - before[0]!, count() - before[1]!] : [reads() - before[0]!]);
  const one = requests ? [1, 1] : [1];
  const get = (range?: string) => {
    const r = request(app).get('/f').buffer(true).parse(raw);
    return range ? r.set('Range', range) : r;
  };
  const cases: [string, number, string | undefined, Buffer][] = [
    ['bytes=100-8099', 206, `bytes 100-8099/${DATA.length}`, DATA.subarray(100, 8100)],
    ['bytes=-10', 206, `bytes ${DATA.length - 10}-${DATA.length - 1}/${DATA.length}`, DATA.subarray(DATA.length - 10)],
    ['bytes=9000-20000', 206, `bytes 9000-${DATA.length - 1}/${DATA.length}`, DATA.subarray(9000)],
    [`bytes=${DATA.length}-`, 416, `bytes */${DATA.length}`, Buffer.from(JSON.stringify({ reason: 'RANGE_NOT_SATISFIABLE' }))],
  ];
  for (const [range, status, contentRange, body] of cases) {
    const before = [reads(), count()];
    const r = await get(range).expect(status);
    expect(r.headers['content-range'], range).to.equal(contentRange);
    expect(Buffer.compare(bytes(r), body), range).to.equal(0);
    expect(since(before), `${range}: store reads, requests to the store`).to.deep.equal(one);
  }
  const before = [reads(), count()];
  const whole = await get().expect(200);
  expect(Buffer.compare(bytes(whole), DATA)).to.equal(0);
  expect(since(before)).to.deep.equal(one);
}

describe('storage: a Range request of a customer file is one read of the store', function () {
  this.timeout(20_000);
  let s3: S3TestServer;
  let dir: string;
  before(async () => {
    s3 = await startS3Server();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'range-reads-'));
  });
  after(async () => {
    await s3?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const s3Store = () =>
    new S3ObjectStore(
      new S3Client({ endpoint: s3.endpoint, bucket: s3.bucket, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, forcePathStyle: true }),
      'storage/',
    );

  it('files on local disk: one read a request', async () => {
    const store = new LocalObjectStore(dir);
    await store.put(KEY, DATA);
    // a local read: the file's stat and one stream of the bytes asked
    await oneReadEach(store, null);
  });

  it('S3: one GET a request (a Range GET: 206 with the size in Content-Range, 416 past the end)', async () => {
    const store = s3Store();
    await store.put(KEY, DATA);
    const gets = () => s3.log.filter((l) => l.startsWith('GET ') || l.startsWith('HEAD ')).length;
    await oneReadEach(store, gets);
    expect(s3.log.filter((l) => l.startsWith('HEAD '))).to.deep.equal([]);
    expect(s3.log.filter((l) => l.startsWith('GET ')).map((l) => l.split(' ')[2])).to.deep.equal(['206', '206', '206', '416', '200']);
  });

  it('S3 that ignores Range (answers 200 whole): still one GET a request, the bytes cut on the way', async () => {
    const store = s3Store();
    await store.put(KEY, DATA);
    s3.ranges = false;
    try {
      const gets = () => s3.log.filter((l) => l.startsWith('GET ') || l.startsWith('HEAD ')).length;
      await oneReadEach(store, gets);
    } finally {
      s3.ranges = true;
    }
  });
});
