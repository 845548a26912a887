// A fork's start on the fsmrf backend when the switch refuses it (fork-tap.ts): the switch's reply is
// network input, so a -ERR over several lines, with control characters, becomes a ForkTapError whose
// message holds it on one line (replyText, esl-arg.ts), as sendDtmf's does. The switch is ours
// (testkit/esl/switch-rig.ts) behind a TCP proxy on the leg's channel socket (esl-channel-proxy.ts): once armed
// it answers `api uuid_audio_fork` (or `api uuid_getvar`, a legRate fork's rate) itself.
import { expect } from 'chai';
import { ForkTapError, type ForkTapServer } from '../../../media-app/media-server/fsmrf/fork-tap';
import { EgressPolicy, egressSettingsFromEnv } from '../../../core/net';
import { useChannelProxySuite } from './esl-channel-proxy';

const MULTI_LINE = '-ERR the first line\nthe second\r\n\tthe \x1b[31mthird\x1b[0m\u2028and\x00last\n';
const FLAT = '-ERR the first line the second the [31mthird [0m and last';

/** The fork server's tokens waiting for a connection (its private map, read by the test only). */
const waitingTokens = (taps: ForkTapServer) => [...(taps as unknown as { waiting: Map<string, unknown> }).waiting.keys()];

describe("media-app fsmrf backend: a fork's start with a switch's multi-line -ERR", function () {
  this.timeout(30_000);
  const { suite, proxy } = useChannelProxySuite({
    rig: { egress: new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' })) },
    connect: { taps: { host: '127.0.0.1', port: 0, connectTimeoutMs: 3000 } },
  });
  afterEach(() => (proxy().answer = null));

  it('uuid_audio_fork start: the reply goes into the ForkTapError on one line at once; nothing waits after; the leg forks after', async () => {
    const { leg } = await suite.call();
    proxy().answer = { command: 'uuid_audio_fork', body: MULTI_LINE };
    const t0 = Date.now();
    const err = await leg.forkAudioStart({ mix: 'in', onFrame: () => undefined }).then(
      () => null,
      (e: Error) => e,
    );
    expect(
      proxy().asked.filter((a) => / start /.test(a.replaceAll('|', ' '))),
      'the proxy answered the start',
    ).to.have.length(1);
    expect(err).to.be.instanceOf(ForkTapError);
    expect(err?.message).to.equal(`uuid_audio_fork start: ${FLAT}`);
    expect(Date.now() - t0, 'not the connect deadline').to.be.below(3000);
    expect(waitingTokens(suite.backend.taps)).to.deep.equal([]);
    proxy().answer = null;
    const fork = await leg.forkAudioStart({ mix: 'in', onFrame: () => undefined });
    expect(await fork.stop()).to.not.equal(null);
  });

  it("a legRate fork's uuid_getvar read_rate answered -ERR: the start fails with the reply on one line, nothing asked of mod_audio_fork", async () => {
    const { leg } = await suite.call({ codecs: ['G722'] });
    proxy().answer = { command: 'uuid_getvar', body: MULTI_LINE };
    const before = proxy().asked.length;
    const err = await leg.forkAudioStart({ mix: 'in', legRate: true, onFrame: () => undefined }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).to.be.instanceOf(ForkTapError);
    expect(err?.message).to.equal(`uuid_getvar read_rate: the switch answered ${FLAT}`);
    expect(proxy().asked.slice(before), 'only the rate asked').to.have.length(1);
    proxy().answer = null;
    const fork = await leg.forkAudioStart({ mix: 'in', legRate: true, onFrame: () => undefined });
    expect(fork.rate).to.equal(16000);
    await fork.stop();
  });
});
