// supertest reads a body it does not know (audio, pcap, files) as nothing: a test that checks the bytes
// asks for them whole with `.buffer(true).parse(bufferBody)`.
import type { Test } from 'supertest';

/** A supertest parser that keeps the body as one Buffer, whatever its content type. */
export const bufferBody: Parameters<Test['parse']>[0] = (res, cb) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

/** The same, the body as one UTF-8 string (a CSV or JSON-lines export checked as text). */
export const textBody: Parameters<Test['parse']>[0] = (res, cb) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks).toString('utf8')));
};
