// sendDtmf on the fsmrf backend when the switch refuses (FsmrfCallEndpoint.sendDtmf): a switch's reply
// is network input, so a -ERR over several lines, with control characters, becomes an Error whose message
// holds it on one line. The switch is ours (testkit/esl/switch-rig.ts) behind a TCP proxy on the leg's channel
// socket (esl-channel-proxy.ts): once armed it answers `api uuid_send_dtmf` itself.
import { expect } from 'chai';
import { useChannelProxySuite } from './esl-channel-proxy';

describe("media-app fsmrf backend: sendDtmf with a switch's multi-line -ERR", function () {
  this.timeout(30_000);
  const { suite, proxy: theProxy } = useChannelProxySuite();

  it('the reply goes into the Error on one line, its control characters as spaces; the proxy alone passes +OK on', async () => {
    const { leg } = await suite.call();
    const proxy = theProxy();
    await leg.sendDtmf('1', 100); // the switch's own +OK, through the proxy
    proxy.answer = { command: 'uuid_send_dtmf', body: '-ERR the first line\nthe second\r\n\tthe \x1b[31mthird\x1b[0m\u2028and\x00last\n' };
    const err = await leg.sendDtmf('2', 100).then(
      () => null,
      (e: Error) => e,
    );
    expect(proxy.asked, 'the proxy answered').to.have.length(1);
    expect(err?.message).to.equal('uuid_send_dtmf: -ERR the first line the second the [31mthird [0m and last');
    proxy.answer = null;
    await leg.sendDtmf('3', 100); // the leg goes on
  });
});
