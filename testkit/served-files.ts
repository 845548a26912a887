// Files served over HTTP on loopback for the suites of a cache (test/media-engine/dsp/fetch-cache.test.ts,
// test/media-app/media-server/shared-prompts-cache.test.ts): each path's body, ETag and Cache-Control,
// a 304 to an If-None-Match that names the ETag, and each request kept (its path and status) so a test
// counts what the cache asked. Mocha hooks: the server for the suite, the files and requests cleared and
// a scratch directory made before each test, removed after it.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { listenOnLoopback } from './loopback-server';

export interface ServedFile {
  body: Buffer;
  /** sent as ETag; an If-None-Match naming it is answered 304 (no body) */
  etag?: string;
  cacheControl?: string;
  /** the answer waits for it (a test acts while the request is out) */
  answerAfter?: Promise<void>;
}

export interface FileServer {
  /** what the server answers at each path (404 elsewhere) */
  readonly served: Map<string, ServedFile>;
  /** each request, in order: its path and status */
  readonly asked: { path: string; status: number }[];
  /** http://127.0.0.1:<port> */
  readonly base: string;
  /** this test's scratch directory */
  readonly root: string;
}

/** The server before the suite, closed after it; `prefix` names the scratch directory made for each test. */
export function useServedFiles(prefix: string): FileServer {
  const served = new Map<string, ServedFile>();
  const asked: { path: string; status: number }[] = [];
  const server = http.createServer((req, res) => {
    const p = req.url ?? '';
    const s = served.get(p);
    const status = !s ? 404 : s.etag && req.headers['if-none-match'] === s.etag ? 304 : 200;
    asked.push({ path: p, status });
    if (!s) return void res.writeHead(404).end();
    const headers = { 'content-type': 'audio/wav', ...(s.etag ? { etag: s.etag } : {}), ...(s.cacheControl ? { 'cache-control': s.cacheControl } : {}) };
    const answer = () => res.writeHead(status, headers).end(status === 200 ? s.body : undefined);
    if (s.answerAfter) void s.answerAfter.then(answer);
    else answer();
  });
  server.on('error', () => undefined);
  let listening: { port: number; close(): Promise<void> } | undefined;
  let root = '';
  before(async () => {
    listening = await listenOnLoopback(server);
  });
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    served.clear();
    asked.length = 0;
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));
  after(() => listening?.close());
  return {
    served,
    asked,
    get base() {
      if (!listening) throw new Error('the file server is not started (use it inside a test)');
      return `http://127.0.0.1:${listening.port}`;
    },
    get root() {
      return root;
    },
  };
}
