// Losing the switch after start-up (media-app/media-server/fsmrf/switch-link.ts), against our event
// socket (esl/): the connect phase's listeners are gone once connected; a killed event socket is
// reported through the backend's log and 'down', new legs are refused, a live leg ends, and the link
// reconnects on its own timer (modesl's reconnect is off), its delay capped; close() cancels that timer.
import { expect } from 'chai';
import { EventEmitter, once } from 'node:events';
import net from 'node:net';
import { FsmrfBackend, MediaServerDown } from '../../../media-app/media-server/fsmrf/backend';
import type { LinkLog } from '../../../media-app/media-server/fsmrf/switch-link';
import type { EslServer } from '../../../esl/server';
import { startSwitchRig, type SwitchRig } from '../../../testkit/esl/switch-rig';
import { PASSWORD, startServer } from '../../../testkit/esl/client';
import { virtualTimers } from '../../support/virtual-timers';
import { boundedOnce } from '../../../testkit/bounded';

type Line = { level: string; msg: string; obj: Record<string, unknown> };

/** A log that keeps its lines (level, message, fields); `next(msg)` resolves at the next line saying `msg`. */
function memoryLog(): LinkLog & { lines: Line[]; next(msg: string): Promise<Line> } {
  const lines: Line[] = [];
  const said = new EventEmitter<{ line: [Line] }>();
  const at = (level: string) => (obj: object, msg: string) => {
    const line = { level, msg, obj: obj as Record<string, unknown> };
    lines.push(line);
    said.emit('line', line);
  };
  const next = (msg: string) =>
    new Promise<Line>((resolve) => {
      const on = (line: Line) => {
        if (line.msg !== msg) return;
        said.off('line', on);
        resolve(line);
      };
      said.on('line', on);
    });
  return { lines, next, info: at('info'), warn: at('warn'), error: at('error') };
}

/** Kills every event-socket connection the server holds (a reset, as a crashed switch's). */
function killConnections(esl: EslServer): void {
  for (const l of esl.connections) (l as unknown as { socket: net.Socket }).socket.destroy();
}

/** Resolves once `ok` holds of the server's connections, checked at each one that goes; each wait bounded at 10 s, naming `what`. */
async function connectionsUntil(esl: EslServer, ok: () => boolean, what: string): Promise<void> {
  while (!ok()) await boundedOnce(esl, 'disconnected', 10_000, what);
}

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
    const timers = virtualTimers();
    backend = await FsmrfBackend.connect({}, { host: '127.0.0.1', port: started.port, password: PASSWORD }, { connectTimeoutMs: 3000, reconnect: { minMs: 300, maxMs: 300 }, log, timers });
    const first = backend.link.ms;
    const down = once(backend.link, 'down');
    killConnections(esl);
    await down;
    expect(backend.up).to.equal(false);
    expect(log.lines.map((l) => `${l.level} ${l.msg}`)).to.include('error lost the media server: new calls refused, live calls ended, reconnecting');
    let refused: unknown;
    await backend.createEndpoint().catch((e: unknown) => (refused = e));
    expect(refused).to.be.instanceOf(MediaServerDown);
    // the retry falls due at the delay on the link's (virtual) timers, not before
    timers.advance(299);
    expect(backend.link.retrying, 'not before the delay').to.equal(true);
    const up = once(backend.link, 'up');
    timers.advance(1);
    expect(backend.link.retrying, 'the attempt under way').to.equal(false);
    await up;
    expect(backend.up).to.equal(true);
    expect(backend.link.ms).not.to.equal(first);
    expect(esl.connections.size, 'one connection again').to.equal(1);
    expect(log.lines.map((l) => l.msg)).to.include('media server connected again');
  });

  it('a switch that stays away: retried at the capped delay; close() cancels the timer, nothing connects after', async () => {
    const started = await startServer();
    esl = started.server;
    const log = memoryLog();
    const timers = virtualTimers();
    backend = await FsmrfBackend.connect({}, { host: '127.0.0.1', port: started.port, password: PASSWORD }, { connectTimeoutMs: 500, reconnect: { minMs: 100, maxMs: 250 }, log, timers });
    const down = once(backend.link, 'down');
    await esl.close(); // the switch goes, and stays away (its port refused)
    esl = undefined;
    await down;
    // the first retry after 100 ms; each failed one waits double, capped at 250: each falls due at its own delay, not before
    for (const delay of [100, 200, 250, 250]) {
      timers.advance(delay - 1);
      expect(backend.link.retrying, `armed ${delay - 1} ms into a ${delay} ms wait`).to.equal(true);
      const failed = log.next('media server still unreachable');
      timers.advance(1);
      expect(backend.link.retrying, `fired at ${delay} ms`).to.equal(false);
      await failed;
    }
    const waits = log.lines.filter((l) => l.msg === 'media server still unreachable').map((l) => l.obj.retry_ms);
    expect(waits).to.deep.equal([200, 250, 250, 250]);
    backend.close();
    expect(backend.link.retrying, 'the retry timer cancelled').to.equal(false);
    expect(timers.pending(), 'no timer left').to.equal(0);
    expect(backend.link.state).to.equal('closed');
    // a switch back on the port, time moved well past the capped delay: its first connection is a probe
    // made after that move (accepted in order), so no reconnect came before it
    const seen: number[] = [];
    const arrived = new EventEmitter<{ port: [number] }>();
    const server = net.createServer((s) => {
      seen.push(s.remotePort!);
      arrived.emit('port', s.remotePort!);
      s.destroy();
    });
    server.on('error', () => undefined);
    server.listen(started.port, '127.0.0.1');
    await once(server, 'listening');
    servers.push(server);
    timers.advance(10 * 250);
    const probe = net.connect(started.port, '127.0.0.1');
    probe.on('error', () => undefined);
    await once(probe, 'connect');
    const probePort = probe.localPort!;
    while (!seen.includes(probePort)) await once(arrived, 'port');
    probe.destroy();
    expect(seen, 'reconnects after close()').to.deep.equal([probePort]);
  });
});

describe('media-app fsmrf backend: a live leg when the switch is lost', function () {
  this.timeout(30_000);
  let sw: SwitchRig | undefined;
  let link: FsmrfBackend | undefined;

  before(async () => {
    sw = await startSwitchRig();
    link = await FsmrfBackend.connect(sw.appSrf, { host: '127.0.0.1', port: sw.port, password: PASSWORD }, { connectTimeoutMs: 3000, reconnect: { minMs: 200, maxMs: 200 } });
  });

  after(async () => {
    link?.close();
    await sw?.close();
  });

  it("the leg and the room end ('destroy', worker-died, naming the loss), their channels hung up; new ones refused while down, made again once up", async () => {
    const backend = link!;
    const esl = sw!.esl;
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
    await connectionsUntil(esl, () => [...esl.connections].every((l) => !(l as unknown as { session: unknown }).session), "the hung-up channel's socket closed");
    await once(backend.link, 'up');
    const again = await backend.createEndpoint();
    expect(again.destroyed).to.equal(false);
    await again.destroy();
  });
});
