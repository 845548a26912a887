// drachtio-srf's debug output (DEBUG=drachtio:*) logs every message it sends, its authenticate line
// with the drachtio secret included: media-app's connection (media-app/kit/srf.ts) registers the secret
// with kit/debug-redact.ts, so an operator following a SIP problem with DEBUG on never prints it.
// A real sip-server on loopback; media-app's connect in a child process (debug reads DEBUG when it loads).
import { runTsChild } from '../../testkit/child-process';
import { expect } from 'chai';
import path from 'node:path';
import pino from 'pino';
import { startSipServer, type SipServer } from '../../testkit/media-app/harness';

const ROOT = path.resolve(__dirname, '../..');
const SECRET = 'drachtio+Debug#Secret&77';

describe("media-app's drachtio connection with DEBUG=drachtio:*", function () {
  this.timeout(30_000);
  let sip: SipServer;

  before(async () => {
    sip = await startSipServer(pino({ level: 'silent' }), SECRET);
  });
  after(async () => {
    await sip?.drachtio.close();
    await sip?.stack.stop();
  });

  it('connects and logs its messages, the secret never whole', async () => {
    // bounded: a connect that never settles fails here, with what was printed so far
    const { out, code } = await runTsChild(ROOT, 'test/media-app/srf-debug-child.ts', {
      DEBUG: 'drachtio:*',
      DEBUG_COLORS: 'no',
      DRACHTIO_PORT: String(sip.drachtioPort),
      DRACHTIO_TEST_SECRET: SECRET,
    });
    expect(out, 'drachtio debug output was on').to.match(/drachtio:agent .*authenticate\|\*\*\*/);
    expect(out).not.to.include(SECRET);
    expect(out).to.include('connected');
    expect(code, out).to.equal(0);
  });
});
