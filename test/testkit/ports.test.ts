// testkit/ports.ts: what one test process hands out of its slice of the port ranges.
import { expect } from 'chai';
import net from 'node:net';
import { listenInTurn, shardSlice, sipPortPair } from '../../testkit/ports';
import { until } from '../../testkit/poll';

/** `server` listening on 127.0.0.1:`port`; rejects with the listen's error. */
function listen(server: net.Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

describe('testkit ports: a process hands each port once in turn', () => {
  it("sipPortPair hands a pair again only after the others of its slice, not at random (each one's user binds it later)", async () => {
    const slice = shardSlice('sipPair', 2);
    const pairs = Math.floor((slice.max - slice.min + 1) / 2);
    const got: number[] = [];
    // half the slice's pairs: 60 drawn at random from 111 (slice 1 of 9) repeat one with a chance over 99.99 %
    for (let i = 0; i < Math.min(60, Math.floor(pairs / 2)); i++) got.push(await sipPortPair());
    expect(new Set(got).size, got.join(' ')).to.equal(got.length);
    for (const p of got) expect((p - slice.min) % 2, `${p} starts a pair of the slice's grid`).to.equal(0);
  });

  it('listenInTurn: a port another socket takes between the turn and the listen is skipped, said with its holder; the listener lands on the next', async () => {
    const thief = net.createServer();
    const server = net.createServer();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    const tried: number[] = [];
    try {
      const port = await listenInTurn(async (p) => {
        tried.push(p);
        if (tried.length === 1) await listen(thief, p); // taken in the window a probe would have left
        await listen(server, p);
      }, 'a test listener');
      expect(tried).to.have.length(2);
      expect(port).to.equal(tried[1]);
      await until(() => warnings.length > 0, 2000, 'the warning');
      expect(warnings[0]).to.include(`a test listener found port ${tried[0]} taken at its listen`).and.include(`pid=${process.pid}`);
    } finally {
      process.off('warning', onWarning);
      thief.close();
      server.close();
    }
  });
});
