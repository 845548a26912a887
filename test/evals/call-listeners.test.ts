// A simulated call leaves nothing on the run-wide signal (evals/call.ts): a run's calls share one
// AbortSignal, so each call's 'abort' listener must go when the call ends, else a run of more than 10
// calls warns MaxListenersExceededWarning and keeps every ended call's closures. The far end is a
// minimal UAS on loopback UDP (answers INVITE with an SDP, BYE with 200); the caller is the real one.
import { expect } from 'chai';
import dgram from 'node:dgram';
import { getEventListeners } from 'node:events';
import { playCall } from '../../evals/call';
import { parseSip, response } from '../../evals/sip-message';
import type { EvalRunScenario } from '../../core/repos/eval-scenarios';

describe('evals: a call removes its listener from the run-wide signal', function () {
  this.timeout(30_000);
  const uas = dgram.createSocket('udp4');
  const rtp = dgram.createSocket('udp4');
  let port = 0;

  before(async () => {
    uas.on('error', () => undefined);
    rtp.on('error', () => undefined);
    rtp.on('message', () => undefined);
    await new Promise<void>((r) => rtp.bind(0, '127.0.0.1', r));
    await new Promise<void>((r) => uas.bind(0, '127.0.0.1', r));
    port = uas.address().port;
    const sdp = `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${rtp.address().port} RTP/AVP 0 101\r\na=rtpmap:101 telephone-event/8000\r\n`;
    uas.on('message', (buf, from) => {
      const m = parseSip(buf);
      if (!m || m.method === null || m.method === 'ACK') return;
      const contact: [string, string][] = [['Contact', `<sip:uas@127.0.0.1:${port}>`]];
      const text = m.method === 'INVITE' ? response(m, 200, 'OK', 'uas1', contact, sdp) : response(m, 200, 'OK', 'uas1');
      uas.send(text, from.port, from.address);
    });
  });
  after(() => {
    uas.close();
    rtp.close();
  });

  it('after 12 answered calls on one signal, the signal has no abort listener (and no MaxListenersExceededWarning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const run = new AbortController();
      const scenario = { id: 's', name: 'short', target: { type: 'number', target: '+1555' }, caller: { language: 'en-US', turns: [{ hangup: true }] }, checks: [] } as unknown as EvalRunScenario;
      const deps = {
        edge: { host: '127.0.0.1', port },
        localHost: '127.0.0.1',
        answerTimeoutMs: 5000,
        maxCallMs: 10_000,
        agentWaitMs: 5000,
        judgeTimeoutMs: 5000,
        goalReplySilenceMs: 1000,
        audioMaxS: 60,
      };
      for (let i = 0; i < 12; i++) {
        const played = await playCall(scenario, deps, run.signal);
        expect(played.endedBy, played.error).to.equal('caller');
        expect(played.answeredAt).to.be.above(0);
      }
      expect(getEventListeners(run.signal, 'abort')).to.have.length(0);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map(String)).to.deep.equal([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
