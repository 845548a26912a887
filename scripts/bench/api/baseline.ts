/** Baseline for the API benchmark: a bare node:http server answering one fixed JSON body (argv[2] = port, stdin = body). */
import http from 'node:http';

let body = '';
process.stdin.on('data', (c) => (body += c));
process.stdin.on('end', () => {
  const buf = Buffer.from(body);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST') JSON.parse(Buffer.concat(chunks).toString() || '{}');
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': buf.length });
      res.end(buf);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.argv[2]), '127.0.0.1', () => process.stdout.write('ready\n'));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
});
