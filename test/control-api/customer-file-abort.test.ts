// A customer file sent by sendCustomerFile (control-api/customer-file.ts: recordings, storage, voicemail,
// agent files, transcripts) whose client leaves mid-download: the source stream (a file descriptor or an
// S3 GET) is destroyed, not left open, and the handler ends without an error of ours.
import { expect } from 'chai';
import express from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { sendCustomerFile } from '../../control-api/customer-file';

describe('control-api: a customer file whose client leaves mid-download', () => {
  it('destroys the source stream and settles the send without an error', async () => {
    let source!: Readable;
    let settled: Promise<unknown> = Promise.resolve();
    const app = express();
    app.get('/f', (_req, res) => {
      let n = 0;
      // a slow, endless source: one 16 KB chunk every 20 ms
      source = new Readable({
        read() {
          setTimeout(() => this.push(Buffer.alloc(16_384, n++ % 256)), 20);
        },
      });
      settled = sendCustomerFile(res, { filename: 'a.wav', contentType: 'audio/wav' }, { stream: source }).then(
        () => 'ok',
        (e: Error) => e,
      );
    });
    const server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/f' }, (res) => {
          res.once('data', () => {
            req.destroy(); // the client goes away after the first bytes
            resolve();
          });
        });
        req.on('error', () => undefined);
        setTimeout(() => reject(new Error('no bytes came')), 5000).unref();
      });
      const outcome = await Promise.race([settled, new Promise((r) => setTimeout(() => r('still pending'), 3000))]);
      expect(outcome, 'the send settles once the client is gone').to.equal('ok');
      expect(source.destroyed, 'the source stream is destroyed').to.equal(true);
    } finally {
      source?.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
