// A leg's channel socket (media-app/media-server/fsmrf/leg-socket.ts): what is pending rejects when the
// socket ends; an operation that throws at once rejects with its own error and leaves nothing pending
// (review finding: a synchronous throw skipped the clean-up, so its entry stayed until the socket ended).
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import net from 'node:net';
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import { LegSocket, LegSocketClosed } from '../../../media-app/media-server/fsmrf/leg-socket';

/** The part of an fsmrf Endpoint LegSocket reads: its channel's connection (an emitter of `esl::end`) and its TCP socket (unconnected). */
const leg = () => {
  const conn = Object.assign(new EventEmitter(), { socket: new net.Socket() });
  return { conn, fs: { conn } as unknown as FsEndpoint };
};
const pendingOf = (s: LegSocket) => (s as unknown as { pending: Set<unknown> }).pending.size;

describe('fsmrf backend: a leg socket', () => {
  it('an operation that throws at once rejects with its error and leaves nothing pending', async () => {
    const { fs } = leg();
    const socket = new LegSocket(fs);
    const err = await socket
      .run('play', () => {
        throw new Error('bad argument');
      })
      .catch((e: unknown) => e);
    expect((err as Error).message).to.equal('bad argument');
    expect(pendingOf(socket)).to.equal(0);
  });

  it('the socket ending rejects what is pending, and what is asked after', async () => {
    const { conn, fs } = leg();
    const socket = new LegSocket(fs);
    const pending = socket.run('say', () => new Promise(() => undefined)).catch((e: unknown) => e);
    conn.emit('esl::end');
    expect(await pending).to.be.instanceOf(LegSocketClosed);
    expect(pendingOf(socket)).to.equal(0);
    expect(await socket.run('play', async () => 1).catch((e: unknown) => e)).to.be.instanceOf(LegSocketClosed);
  });
});
