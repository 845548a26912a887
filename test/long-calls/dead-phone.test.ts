// Dead peers end (issue 52), with real phones: baresip A calls baresip B (two extensions of one
// customer), both talk, then B is killed with -9 (no BYE, no RTP, no REGISTER ever again). With
// MEDIA_INACTIVITY_TIMEOUT_MS at 3 s the platform ends the call once B has been silent that long, and
// not before: A's phone gets a BYE carrying `Reason: SIP;cause=408;text="Media timeout"` (seen in
// its SIP trace) and closes the call; B's leg is recorded media_timeout, hung up by the remote side
// (the dead phone); A's call, whose phone kept talking, is hung up by the platform; no session stays.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { CallRow } from '../../core/repos/calls';
import { createExtension, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { testDb, truncateAll } from '../../testkit/db';
import { callWithStatus } from '../../testkit/long-calls/calls';
import { talking } from '../../testkit/long-calls/dead-parties';
import { Baresip } from '../../testkit/baresip';
import { toneWav } from '../edge/audio';

const HAVE_BARESIP = fs.existsSync('/usr/bin/baresip');
const TIMEOUT_MS = 3000;
/** The receive watch's period (media-engine/worker/rx-watch.ts) and a loaded machine's slack. */
const LATE_MS = 3000;
const MEDIA_TIMEOUT_REASON = /^Reason:\s*SIP;cause=408;text="Media timeout"\s*$/im;

(HAVE_BARESIP ? describe : describe.skip)('dead peers: a baresip phone killed mid-call', function () {
  this.timeout(60_000);
  let p: Platform;
  const phones: Baresip[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dead-phone-'));

  before(async () => {
    await truncateAll();
    p = await startPlatform({ MEDIA_INACTIVITY_TIMEOUT_MS: String(TIMEOUT_MS) });
  });
  after(async () => {
    await Promise.all(phones.map((b) => b.dispose()));
    await p?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A registered baresip phone of `e` whose microphone is a tone of `hz` (30 s: longer than the test). */
  async function phone(e: Awaited<ReturnType<typeof createExtension>>, hz: number): Promise<Baresip> {
    const mic = path.join(dir, `${hz}.wav`);
    toneWav(mic, hz);
    const b = await Baresip.start({ user: e.ext.username, domain: e.domain, password: e.password, outboundProxy: `sip:127.0.0.1:${p.sipPort}`, sipTrace: true }, mic);
    phones.push(b);
    await until(async () => (await p.app.registrar.bindings.get(`${e.ext.username}@${e.domain}`)).length > 0 || null, 10_000, `${e.ext.username} registered`).catch((err: Error) => {
      throw new Error(`${err.message}\n${b.log.slice(-3000)}`);
    });
    return b;
  }

  it('A calls B, B is killed with -9: the call ends by the inactivity timeout, A gets BYE with the Reason, the record names B', async () => {
    const ea = await createExtension();
    const eb = await createExtension(ea.customerId);
    const [a, b] = [await phone(ea, 700), await phone(eb, 1300)];
    await a.dial(`sip:${eb.ext.username}@${eb.domain}`);
    await until(() => (a.saw('CALL_ESTABLISHED') && b.saw('CALL_ESTABLISHED')) || null, 15_000, 'the call established on both phones').catch((err: Error) => {
      throw new Error(`${err.message}\nA: ${a.log.slice(-2000)}\nB: ${b.log.slice(-2000)}`);
    });
    const db = await testDb();
    const rowOf = (where: Record<string, string>, what: string) =>
      until(
        async () =>
          ((await db('calls')
            .where({ customer_id: ea.customerId, ...where })
            .first()) as CallRow | undefined) ?? null,
        10_000,
        what,
      );
    const aRow = await rowOf({ direction: 'incoming' }, 'A’s call');
    const bRow = await rowOf({ direction: 'outgoing', master_call_id: aRow.id }, 'B’s leg');
    // both talk a moment (half a second of each phone's RTP has reached the platform), then B dies
    await talking(p, aRow.id, 'A');
    await talking(p, bRow.id, 'B');
    const killedAt = Date.now();
    await b.kill();

    await until(() => a.saw('CALL_CLOSED') || null, TIMEOUT_MS + LATE_MS + 5000, 'A’s phone sees the hang-up').catch((err: Error) => {
      throw new Error(`${err.message}\nA: ${a.log.slice(-3000)}`);
    });
    const closedAfter = Date.now() - killedAt;
    expect(closedAfter, 'ended by the inactivity timeout: not before it').to.be.at.least(TIMEOUT_MS - 100);
    expect(closedAfter, 'ended by the inactivity timeout: soon after it').to.be.at.most(TIMEOUT_MS + LATE_MS);
    // the BYE A's phone received (baresip's SIP trace) says why
    const bye = a.log.split('#\n').find((m) => m.includes(`-> 127.0.0.1:${a.sipPort}\nBYE sip:`));
    expect(bye, `the BYE to A in its trace:\n${a.log.slice(-4000)}`).to.match(MEDIA_TIMEOUT_REASON);

    const bEnded = await callWithStatus(db, bRow.id, 'hangup', 'B’s leg ended');
    expect(bEnded, 'B’s leg: the dead side').to.include({ hangup_reason: 'media_timeout', hangup_by: 'remote' });
    const aEnded = await callWithStatus(db, aRow.id, 'hangup', 'A’s call ended');
    expect(aEnded.hangup_by, 'A’s call: hung up by the platform, not by A').to.equal('local');
    expect(aEnded.hangup_reason, 'A kept talking: A’s call is not the one that timed out').to.not.equal('media_timeout');
    await until(() => (p.app.calls.get(aRow.id) === undefined && p.app.calls.get(bRow.id) === undefined) || null, 5000, 'both sessions gone');
  });
});
