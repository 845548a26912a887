// core/net/socket-guard.ts on real servers on loopback: a reset during an async upgrade admission ends
// that socket only (an unhandled 'error' would fail this mocha process), an upgrade nobody claims is
// closed after the timeout, parse errors get 400 / 431, and a net server's sockets are guarded at accept.
import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { guardServer } from '../../core/net/socket-guard';
import { connect, head, readFor, reset, sleep, upgradeHeaders } from '../reliability/faults/raw-socket';

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

describe('core/net socket guard', () => {
  const servers: net.Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      (s as http.Server).closeAllConnections?.();
      await new Promise((r) => s.close(r));
    }
  });

  it('a reset while an upgrade is being admitted ends that socket, not the process', async () => {
    const server = guardServer(http.createServer());
    servers.push(server);
    let refusedWrites = 0;
    server.on('upgrade', (_req, socket) => {
      // admission takes a while (a database lookup); the refusal is written to a socket the client reset
      setTimeout(() => {
        refusedWrites++;
        socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      }, 100);
    });
    const port = await listen(server);
    for (let i = 0; i < 10; i++) {
      const s = await connect(port);
      s!.write(head('/ws', upgradeHeaders(port)));
      reset(s);
    }
    await sleep(400);
    expect(refusedWrites).to.equal(10);
    const s = await connect(port);
    s!.write(head('/ws', upgradeHeaders(port)));
    expect(await readFor(s!, 2000)).to.match(/^HTTP\/1\.1 401/);
    reset(s);
  });

  it('closes an upgrade no handler answers after upgradeTimeoutMs', async () => {
    const server = guardServer(http.createServer(), { upgradeTimeoutMs: 300 });
    servers.push(server);
    server.on('upgrade', () => undefined); // another path's handler: not this one
    const port = await listen(server);
    const s = (await connect(port))!;
    const t0 = Date.now();
    s.write(head('/nobody', upgradeHeaders(port)));
    await new Promise((r) => s.once('close', r));
    expect(Date.now() - t0).to.be.within(250, 2000);
  });

  it('answers what the HTTP parser refuses with 400, oversized headers with 431', async () => {
    const server = guardServer(http.createServer((_q, r) => r.end('ok')));
    servers.push(server);
    const port = await listen(server);
    const bad = (await connect(port))!;
    bad.write('GET / HTTP/9.9 x\r\n\r\n');
    expect(await readFor(bad, 2000)).to.match(/^HTTP\/1\.1 400 /);
    const big = (await connect(port))!;
    big.write(head('/', { Host: 'x', 'X-Big': 'x'.repeat(20_000) }));
    expect(await readFor(big, 2000)).to.match(/^HTTP\/1\.1 431 /);
    reset(bad);
    reset(big);
  });

  it("guards a net server's sockets at accept, before its own handler runs", async () => {
    let seen = 0;
    const server = guardServer(
      net.createServer((socket) => {
        seen++;
        // an owner that writes late and never listens for errors
        setTimeout(() => socket.write('late\r\n'), 100);
      }),
    );
    servers.push(server);
    const port = await listen(server);
    for (let i = 0; i < 5; i++) reset(await connect(port));
    await sleep(300);
    expect(seen).to.equal(5);
  });
});
