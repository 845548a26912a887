// The outbound requests added for conferences in the Twilio layer pass the egress policy: the recording
// status callback of <Conference record="record-from-start"> (media-app/twiml/conference-recording-callbacks.ts)
// and the AnnounceUrl document of a conference announcement (media-app/conference/announce.ts).
// Loopback, private and link-local destinations are refused before any connection (a real HTTP server
// on loopback counts what reaches it); the operator's allowlist (EGRESS_ALLOW_CIDRS) opens loopback.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import pino from 'pino';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { newId } from '../../core/ids';
import { repos } from '../../core/repos';
import { PolicyHttp } from '../../media-app/kit/http';
import { conferenceRecordingCallbacks } from '../../media-app/twiml/conference-recording-callbacks';
import { announce } from '../../media-app/conference/announce';
import { testDb } from '../../testkit/db';
import { insertRecording } from '../../testkit/recordings';

const HOSTS = ['127.0.0.1', '10.0.0.1', '169.254.169.254'];
const policy = (allow = '') => new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: allow }));

describe('security: conference recording callbacks and announcements pass the egress policy', function () {
  this.timeout(30_000);
  let server: http.Server;
  let port = 0;
  let hits = 0;
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });

  before(async () => {
    server = http.createServer((req, res) => {
      hits++;
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/xml' }).end('<Response><Play>https://media.example.com/a.wav</Play></Response>'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  it('recording status callback: refused to loopback, private and link-local (not delivered, nothing reached); the allowlist opens loopback', async () => {
    const db = await testDb();
    const customer = await repos(db).customers.create({ email: `confegress${Date.now()}@example.test`, status: 'active', name: 'egress' });
    const id = newId();
    await insertRecording(db, customer.id, id, 'r.wav', { reference_type: 'conference', tm_start: new Date(Date.now() - 5000), tm_end: new Date() });
    const send = (allow: string, host: string) =>
      conferenceRecordingCallbacks(
        { db, http: new PolicyHttp(policy(allow)), jwtSecret: 'test-secret-for-signing-0123456789', publicUrl: 'https://voice.example.com', logger, timeoutMs: 2000, retryMs: 10 },
        newId(),
        id,
        { url: `http://${host}:${port}/rec`, method: 'POST', events: ['completed'] },
        Promise.resolve(),
      );
    const before = hits;
    for (const host of HOSTS) {
      warnings.length = 0;
      await send('', host);
      expect(warnings.join('\n'), host)
        .to.match(/twiml callback not delivered/)
        .and.match(/refused/);
    }
    expect(hits, 'nothing reached the server').to.equal(before);
    await send('127.0.0.0/8', '127.0.0.1');
    expect(hits).to.equal(before + 1);
  });

  it('AnnounceUrl document: refused to loopback, private and link-local (the reason says so, nothing reached); the allowlist opens loopback', async () => {
    const a = (host: string) => ({ url: `http://${host}:${port}/announce`, method: 'POST' as const, params: { AccountSid: 'AC0' }, authToken: 'token-0123456789' });
    const before = hits;
    for (const host of HOSTS) {
      const reason = await announce({ http: new PolicyHttp(policy()), timeoutMs: 2000 }, a(host), () => []);
      expect(reason, host).to.match(/refused/);
    }
    expect(hits, 'nothing reached the server').to.equal(before);
    // fetched once allowed; with nobody left in the room it ends there
    expect(await announce({ http: new PolicyHttp(policy('127.0.0.0/8')), timeoutMs: 2000 }, a('127.0.0.1'), () => [])).to.equal('nobody to announce to');
    expect(hits).to.equal(before + 1);
  });
});
