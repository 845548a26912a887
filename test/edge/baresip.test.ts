// Real softphones against the platform: two baresip 1.0 (Debian) instances with their default
// settings (no algorithm chosen, only user, password and the outbound proxy a provisioning
// document gives) register, call each other with a tone each way, and call an IVR whose talk
// action they hear. baresip 1.0 gives up at the first digest algorithm it does not know, so this
// holds the challenge default (MD5 offered first) to what real phones accept.
import fs from 'node:fs';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { testDb } from '../../testkit/db';
import { createExtension, until } from '../../testkit/media-app/harness';
import { loudness, toneShare } from './audio';
import { useBaresipSuite } from './baresip-suite';

const HAVE_BARESIP = fs.existsSync('/usr/bin/baresip');

(HAVE_BARESIP ? describe : describe.skip)('edge: baresip 1.0 with default settings', function () {
  this.timeout(90_000);
  const suite = useBaresipSuite();
  const phone = (ext: { username: string }, domain: string, password: string, hz: number) => suite.phone(ext, domain, password, suite.tone(hz));

  it('registers, and two baresip phones call each other with audio both ways', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const alice = await phone(a.ext, a.domain, a.password, 700);
    const bob = await phone(b.ext, b.domain, b.password, 1300);
    await alice.dial(`sip:${b.ext.username}@${b.domain}`);
    await until(() => (alice.saw('CALL_ESTABLISHED') && bob.saw('CALL_ESTABLISHED')) || null, 15_000, 'call established on both phones').catch((err: Error) => {
      throw new Error(`${err.message}\nalice: ${JSON.stringify(alice.events)}\n${alice.log.slice(-2000)}\nbob: ${JSON.stringify(bob.events)}\n${bob.log.slice(-2000)}`);
    });
    await new Promise((r) => setTimeout(r, 3000));
    await alice.hangup();
    await until(() => bob.saw('CALL_CLOSED') || null, 10_000, 'bob sees the hang-up');
    await Promise.all([alice.stop(), bob.stop()]);
    expect(toneShare(bob.heardWav, 700), 'bob hears alice (700 Hz)').to.be.greaterThan(0.5);
    expect(toneShare(alice.heardWav, 1300), 'alice hears bob (1300 Hz)').to.be.greaterThan(0.5);
  });

  it('calls an IVR number and hears its talk action until the flow hangs up', async () => {
    const a = await createExtension();
    const db = await testDb();
    const flow = await flowsRepo(db).create({
      customer_id: a.customerId,
      actions: parseActions([
        { type: 'answer' },
        { type: 'talk', option: { text: 'Welcome to the support line. Please hold while we connect you.', language: 'en-US' } },
        { type: 'sleep', option: { duration: 500 } },
        { type: 'hangup' },
      ]),
    } as never);
    const number = `+1555${String(Date.now()).slice(-7)}`;
    await numbersRepo(db).create({ customer_id: a.customerId, number, type: 'normal', call_flow_id: flow.id } as never);
    const alice = await phone(a.ext, a.domain, a.password, 700);
    await alice.dial(`sip:${number}@${a.domain}`);
    await until(() => alice.saw('CALL_CLOSED') || null, 30_000, 'the IVR hangs up');
    await alice.stop();
    expect(alice.saw('CALL_ESTABLISHED'), alice.log.slice(-1500)).to.equal(true);
    expect(loudness(alice.heardWav), 'alice hears the prompt').to.be.greaterThan(200);
  });
});
