// Losing the switch after start-up (media-app/media-server/fsmrf/switch-link.ts), against our event
// socket (esl/): the connect phase's listeners are gone once connected; a killed event socket is
// reported through the backend's log and 'down', new legs are refused, a live leg ends, and the link
// reconnects on its own timer (modesl's reconnect is off), its delay capped; close() cancels that timer.
import { expect } from 'chai';
import { once } from 'node:events';
import net from 'node:net';
import { FsmrfBackend, MediaServerDown } from '../../../media-app/media-server/fsmrf/backend';
import type { LinkLog } from '../../../media-app/media-server/fsmrf/switch-link';
import { MediaServer } from '../../../media-engine';
import { SipFace } from '../../../esl/sip-face';
import type { EslServer } from '../../../esl/server';
import { portRange } from '../../../testkit/media-engine/support';
import { connectSrf, disconnectSrf, startServer as startSipServer, type Server as SipServer } from '../../sip-server/drachtio/harness';
import { PASSWORD, startServer } from '../../esl/support';

/** A log that keeps its lines (level, message, fields). */
function memoryLog(): LinkLog & { lines: { level: string; msg: string; obj: Record<string, unknown> }[] } {
  const lines: { level: string; msg: string; obj: Record<string, unknown> }[] = [];
  const at = (level: string) => (obj: object, msg: string) => void lines.push({ level, msg, obj: obj as Record<string, unknown> });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** Kills every event-socket connection the server holds (a reset, as a crashed switch's). */
function killConnections(esl: EslServer): void {
  for (const l of esl.connections) (l as unknown as { socket: net.Socket }).socket.destroy();
}

const until = async (what: string, ok: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('media-app fsmrf backend: losing the switch after start-up', function () {
  this.timeout(20_000);
  let esl: EslServer | undefined;
  let backend: FsmrfBackend | undefined;
  const servers: net.Server[] = [];

  afterEach(async () => {
    backend?.close();
    backend = undefined;
    await esl?.close();
    esl = undefined;
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  });

  it("once connected, the connect phase's listeners are removed (only MediaServer's and the link's remain)", async () => {
    const started = await startServer();
    esl = started.server;
    backend = await FsmrfBackend.connect({}, { host: '127.0.0.1', port: started.port, password: PASSWORD }, { connectTimeoutMs: 3000 });
    const conn = backend.link.ms.conn as unknown as { listeners(e: string): unknown[]; reconnectOpts: { maxAttempts?: number } };
    expect(conn.listeners('esl::end'), "esl::end: MediaServer's").to.have.length(1);
    expect(conn.listeners('error'), "error: MediaServer's").to.have.length(1);
    expect(conn.listeners('esl::event::auth::fail')).to.have.length(0);
    expect(conn.listeners('esl::event::raw::text/rude-rejection')).to.have.length(0);
    expect(backend.link.ms.listeners('error'), "the link's").to.have.length(1);
    expect(conn.reconnectOpts.maxAttempts, "modesl's own reconnect off").to.equal(1);
  });

  it('a killed event socket: logged, down, new legs refused; reconnected after the delay; up again', async () => {
    const started = await startServer();
    esl = started.server;
    const log = memoryLog();
    backend = await FsmrfBackend.connect({}, { host: '127.0.0.1', port: started.port, password: PASSWORD }, { connectTimeoutMs: 3000, reconnect: { minMs: 300, maxMs: 300 }, log });
    const first = backend.link.ms;
    const down = once(backend.link, 'down');
    const killedAt = Date.now();
    killConnections(esl);
    await down;
    expect(backend.up).to.equal(false);
    expect(log.lines.map((l) => `${l.level} ${l.msg}`)).to.include('error lost the media server: new calls refused, live calls ended, reconnecting');
    let refused: unknown;
    await backend.createEndpoint().catch((e: unknown) => (refused = e));
    expect(refused).to.be.instanceOf(MediaServerDown);
    await once(backend.link, 'up');
    expect(Date.now() - killedAt, 'not before the delay').to.be.at.least(280);
    expect(backend.up).to.equal(true);
    expect(backend.link.ms).not.to.equal(first);
    expect(esl.connections.size, 'one connection again').to.equal(1);
    expect(log.lines.map((l) => l.msg)).to.include('media server connected again');
  });

  it('a switch that stays away: retried at the capped delay; close() cancels the timer, nothing connects after', async () => {
    const started = await startServer();
    esl = started.server;
    const log = memoryLog();
    backend = await FsmrfBackend.connect({}, { host: '127.0.0.1', port: started.port, password: PASSWORD }, { connectTimeoutMs: 500, reconnect: { minMs: 100, maxMs: 250 }, log });
    const down = once(backend.link, 'down');
    await esl.close(); // the switch goes, and stays away (its port refused)
    esl = undefined;
    await down;
    await until('three failed retries', () => log.lines.filter((l) => l.msg === 'media server still unreachable').length >= 3);
    const waits = log.lines.filter((l) => l.msg === 'media server still unreachable').map((l) => l.obj.retry_ms);
    // the first retry after 100 ms; each failed one waits double, capped at 250
    expect(waits.slice(0, 3)).to.deep.equal([200, 250, 250]);
    backend.close();
    expect(backend.link.retrying, 'the retry timer cancelled').to.equal(false);
    expect(backend.link.state).to.equal('closed');
    // a switch back on the port sees no one, well past the capped delay
    let connections = 0;
    const server = net.createServer((s) => (connections++, s.destroy()));
    server.on('error', () => undefined);
    server.listen(started.port, '127.0.0.1');
    await once(server, 'listening');
    servers.push(server);
    await new Promise((r) => setTimeout(r, 800));
    expect(connections, 'reconnects after close()').to.equal(0);
  });
});

describe('media-app fsmrf backend: a live leg when the switch is lost', function () {
  this.timeout(30_000);
  const parts: { appSip?: SipServer; faceSip?: SipServer; engine?: MediaServer; esl?: EslServer; appSrf?: any; faceSrf?: any; backend?: FsmrfBackend } = {}; // drachtio-srf untyped, as test/esl/rig.ts drives it

  before(async () => {
    parts.appSip = await startSipServer();
    parts.faceSip = await startSipServer();
    parts.engine = await MediaServer.start({ rtpPorts: portRange(), workers: 1 });
    const { server, port } = await startServer({ profile: { name: 'drachtio_mrf', address: `127.0.0.1:${parts.faceSip.sipPort}` } });
    parts.esl = server;
    parts.faceSrf = await connectSrf(parts.faceSip.drachtioPort);
    new SipFace(parts.faceSrf, parts.engine, server).start();
    parts.appSrf = await connectSrf(parts.appSip.drachtioPort);
    parts.backend = await FsmrfBackend.connect(parts.appSrf, { host: '127.0.0.1', port, password: PASSWORD }, { connectTimeoutMs: 3000, reconnect: { minMs: 200, maxMs: 200 } });
  });

  after(async () => {
    parts.backend?.close();
    if (parts.appSrf) disconnectSrf(parts.appSrf);
    if (parts.faceSrf) disconnectSrf(parts.faceSrf);
    await parts.esl?.close();
    await parts.engine?.destroy();
    await parts.appSip?.close();
    await parts.faceSip?.close();
  });

  it("the leg and the room end ('destroy', worker-died, naming the loss), their channels hung up; new ones refused while down, made again once up", async () => {
    const backend = parts.backend!;
    const esl = parts.esl!;
    const ep = await backend.createEndpoint();
    expect(esl.connections.size, 'the event socket and the channel socket').to.equal(2);
    const mix = await backend.createMix(`loss-room-${Date.now()}`);
    const roomEnded = once(mix, 'destroy');
    const ended = once(ep, 'destroy');
    // only the inbound event socket: the leg's channel socket (the switch's outbound connection) stays
    for (const l of esl.connections) if (!(l as unknown as { session: unknown }).session) (l as unknown as { socket: net.Socket }).socket.destroy();
    const [end] = (await ended) as [{ reason: string; message: string }];
    // down now (the reconnect is 200 ms away): a room is refused like a leg
    expect(
      await backend.createMix('while-down').then(
        () => null,
        (e: unknown) => e,
      ),
    ).to.be.instanceOf(MediaServerDown);
    expect(end.reason).to.equal('worker-died');
    expect(end.message).to.match(/media server connection was lost/);
    expect(ep.destroyed).to.equal(true);
    // the room on the switch ends with it (its control leg is a channel like the leg's)
    const [roomEnd] = (await roomEnded) as [{ reason: string }];
    expect(roomEnd.reason).to.equal('worker-died');
    expect(mix.destroyed).to.equal(true);
    // the channel is hung up on the switch: its channel socket goes
    await until('the channel hung up', () => [...esl.connections].every((l) => !(l as unknown as { session: unknown }).session));
    await once(backend.link, 'up');
    const again = await backend.createEndpoint();
    expect(again.destroyed).to.equal(false);
    await again.destroy();
  });
});
