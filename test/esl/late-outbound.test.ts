// The switch's outbound socket that connects after its channel ended (esl/sip-face.ts dial): the channel
// hung up while the connect was pending, so its goodbye could not be sent then; once the socket connects
// it gets the goodbye (text/disconnect-notice for the channel) and is closed, never kept as a Listener
// of a dead channel. The late connect is real: fsmrf's listener stand-in is a child process stopped
// (SIGSTOP) with its accept queue full, so the switch's SYN is dropped until the child runs again and
// the kernel's SYN retransmit gets through.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import readline from 'node:readline';
import { startSwitchRig, type SwitchRig } from '../../testkit/esl/switch-rig';
import { PASSWORD, RawClient } from '../../testkit/esl/client';
import { bounded, boundedOnce } from '../../testkit/bounded';
import { until } from '../../testkit/media-app/harness';

const SDP = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 9 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', 'a=sendrecv', ''].join('\r\n');

/** A listener (backlog 1: two queued connections fill it) that prints its port, then per connection closed: `{remotePort, data}`. */
const LISTENER = `
const net = require('node:net');
const s = net.createServer((c) => {
  let data = '';
  c.on('data', (d) => (data += d));
  c.on('error', () => undefined);
  c.on('close', () => console.log(JSON.stringify({ remotePort: c.remotePort, data })));
});
s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => console.log(JSON.stringify({ port: s.address().port })));
`;

describe('esl: an outbound socket that connects after its channel hung up', function () {
  this.timeout(30_000);
  let rig: SwitchRig;
  let client: RawClient | null = null;
  let child: ChildProcess | null = null;
  const fillers: net.Socket[] = [];

  before(async () => {
    rig = await startSwitchRig();
  });
  after(async () => {
    for (const f of fillers) f.destroy();
    if (child?.pid && child.exitCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    client?.send('exit\n\n');
    await rig?.close();
  });

  it('gets the goodbye for its channel and is closed; no Listener is left', async () => {
    // an authenticated inbound connection from 127.0.0.1: the face dials only such a host (its ACL)
    client = await RawClient.authed(rig.port, PASSWORD);
    child = spawn(process.execPath, ['-e', LISTENER], { stdio: ['ignore', 'pipe', 'inherit'] });
    // an async iterator keeps the lines that come together (a 'line' listener would miss the second)
    const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async () => JSON.parse(String((await bounded(lines.next(), 10_000, 'a line of the listener')).value)) as { port: number; remotePort: number; data: string };
    const { port } = await next();
    // stopped, its accept queue filled by two connections the kernel completes for it: a third SYN is dropped
    child.kill('SIGSTOP');
    for (let i = 0; i < 2; i++) {
      const f = net.connect(port, '127.0.0.1');
      f.on('error', () => undefined);
      fillers.push(f);
      await boundedOnce(f, 'connect', 5000, 'a filler connection');
    }

    const dialog = (await rig.appSrf.createUAC(`sip:drachtio@${rig.esl.api.profile.address}`, { headers: { 'X-esl-outbound': `127.0.0.1:${port}` }, localSdp: SDP })) as unknown as {
      destroy(): Promise<unknown>;
    };
    const [uuid] = [...rig.esl.channels.keys()];
    expect(uuid, 'the channel').to.be.a('string');
    const listenerOf = () => [...rig.esl.connections].find((l) => l.session?.channel.uuid === uuid);
    expect(listenerOf(), 'the outbound socket still connecting').to.equal(undefined);
    // the channel hangs up (our BYE) while its socket connects
    await dialog.destroy();
    await until(() => !rig.esl.channels.has(uuid!), 5000, 'the channel ended');
    expect(listenerOf(), 'the outbound socket still connecting').to.equal(undefined);

    child.kill('SIGCONT');
    // the fillers are accepted, then the switch's connection at its SYN's retransmit; each line is one closed connection
    const fillerPorts = new Set(fillers.map((f) => f.localPort));
    let late: { remotePort: number; data: string } | null = null;
    while (!late) {
      const c = await next();
      if (!fillerPorts.has(c.remotePort)) late = c;
      // a filler is closed by us only at the end: a line of one here would be a bug of the test
      expect(fillerPorts.has(c.remotePort), 'a filler closed early').to.equal(false);
    }
    expect(late.data).to.contain('Content-Type: text/disconnect-notice');
    expect(late.data).to.contain(`Controlled-Session-UUID: ${uuid}`);
    // its Listener goes with the socket's close on the switch's side
    while (listenerOf()) await boundedOnce(rig.esl, 'disconnected', 5000, 'the Listener of the dead channel gone');
  });
});
