// The switch's outbound socket that connects after its channel ended (esl/sip-face.ts dial): the channel
// hung up while the connect was pending, so its goodbye could not be sent then; once the socket connects
// it gets the goodbye (text/disconnect-notice for the channel) and is closed, never kept as a Listener
// of a dead channel. The late connect is real: fsmrf's listener stand-in is a child process stopped
// (SIGSTOP) with its accept queue full, so the switch's SYN is dropped until the child runs again and
// the kernel's SYN retransmit gets through.
import { expect } from 'chai';
import { useOutboundStall } from '../../testkit/esl/outbound-stall';
import { boundedOnce } from '../../testkit/bounded';
import { until } from '../../testkit/media-app/harness';

describe('esl: an outbound socket that connects after its channel hung up', function () {
  this.timeout(30_000);
  const stall = useOutboundStall();

  it('gets the goodbye for its channel and is closed; no Listener is left', async () => {
    const rig = stall.rig;
    const { dialog, uuid } = await stall.dial();
    const listenerOf = () => [...rig.esl.connections].find((l) => l.session?.channel.uuid === uuid);
    expect(listenerOf(), 'the outbound socket still connecting').to.equal(undefined);
    // the channel hangs up (our BYE) while its socket connects
    await dialog.destroy();
    await until(() => !rig.esl.channels.has(uuid), 5000, 'the channel ended');
    expect(listenerOf(), 'the outbound socket still connecting').to.equal(undefined);

    stall.resume();
    // the fillers are accepted, then the switch's connection at its SYN's retransmit; each line is one closed connection
    const fillerPorts = new Set(stall.fillers.map((f) => f.localPort));
    let late: { remotePort: number; data: string } | null = null;
    while (!late) {
      const c = await stall.nextClosed();
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
