// TCP_NODELAY on both of media-app's event-socket connections to the switch (drachtio-modesl writes a
// command's lines in separate writes: with Nagle the last one waits for the switch's delayed ACK): the
// inbound connection (media-app/media-server/fsmrf/connect.ts) and each leg's channel socket
// (leg-socket.ts). The option is read back from node's socket (the flag setNoDelay records, applied to the
// handle at connect), and a connection whose `socket` field is gone (a renamed field in modesl) is an error
// naming it, never a silent skip.
import { expect } from 'chai';
import net from 'node:net';
import { FsmrfBackend, type FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';
import { eslSocket, LegSocket } from '../../../media-app/media-server/fsmrf/leg-socket';
import type { Endpoint } from '../../../media-engine';
import { startSwitchRig, type SwitchRig } from '../../../testkit/esl/switch-rig';
import { PASSWORD } from '../../../testkit/esl/client';

/** Whether setNoDelay(true) was asked of `socket` (node's own record of it: kSetNoDelay). */
function noDelay(socket: net.Socket): boolean {
  const key = Object.getOwnPropertySymbols(socket).find((k) => k.description === 'kSetNoDelay');
  if (!key) throw new Error("node's socket has no kSetNoDelay record: this check needs another way to read TCP_NODELAY back");
  return (socket as unknown as Record<symbol, unknown>)[key] === true;
}

describe('media-app fsmrf backend: TCP_NODELAY on the event socket and on each leg socket', function () {
  this.timeout(20_000);
  let rig: SwitchRig;
  let backend: FsmrfBackend;
  let peer: Endpoint | null = null;
  let leg: FsmrfCallEndpoint | null = null;

  before(async () => {
    rig = await startSwitchRig();
    backend = await FsmrfBackend.connect(rig.appSrf, { host: '127.0.0.1', port: rig.port, password: PASSWORD }, { connectTimeoutMs: 5000 });
    peer = await rig.engine.createEndpoint();
    leg = await backend.createEndpoint({ remoteSdp: peer.local.sdp });
  });
  after(async () => {
    await leg?.destroy();
    await peer?.destroy();
    backend?.close();
    await rig?.close();
  });

  it('both sockets have it, and a socket made without it reads false (the check can fail)', () => {
    const inbound = eslSocket(backend.link.ms.conn as object, 'inbound');
    const channel = eslSocket(leg!.fs.conn as object, 'channel');
    expect(noDelay(inbound), 'the event-socket connection').to.equal(true);
    expect(noDelay(channel), "the leg's channel socket").to.equal(true);
    expect(noDelay(new net.Socket()), 'a fresh socket').to.equal(false);
  });

  it("a connection whose socket field is missing is an error naming it (the leg's socket, the end's read)", () => {
    const conn = leg!.fs.conn as unknown as { socket: unknown };
    const real = conn.socket;
    try {
      // modesl's field renamed: the connection still works, the field this code reads is gone
      delete (conn as { socket?: unknown }).socket;
      (conn as unknown as { _sock: unknown })._sock = real;
      expect(() => new LegSocket(leg!.fs)).to.throw(/the leg's channel connection: drachtio-modesl's connection has no socket \(its 'socket' field is missing\)/);
      expect(() => eslSocket(conn, 'the event-socket connection')).to.throw(/^the event-socket connection: .*missing/);
    } finally {
      conn.socket = real;
      delete (conn as unknown as { _sock?: unknown })._sock;
    }
  });
});
