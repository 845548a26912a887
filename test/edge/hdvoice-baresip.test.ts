// HD voice between real softphones (issue #34): two baresip 1.0 phones with their g722 (or opus) module
// loaded first register as extensions and call each other through the platform. Alice's microphone
// is a 6 kHz tone at 16 kHz, which only a wideband path carries (8 kHz audio ends at 4 kHz):
// - G.722 ↔ G.722: Bob hears the 6 kHz tone (the engine's bridge passes 16 kHz frames through);
// - G.722 ↔ PCMU (Bob's extension takes PCMU only): the call works both ways (Alice hears Bob's
//   1 kHz tone, transcoded in the engine) and the 6 kHz tone is absent at Bob;
// - Opus ↔ Opus: Bob hears the 6 kHz tone.
// - Opus ↔ Opus, digits: baresip 1.0 offers Opus with telephone-event/8000 only (issue 52); the
//   platform answers it at 8000 and the digits Alice keys reach Bob as telephone-events.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { extensionsRepo } from '../../core/repos/extensions';
import { testDb } from '../../testkit/db';
import { createExtension, until } from '../../testkit/media-app/harness';
import type { Baresip } from '../../testkit/baresip';
import { loudness, toneShare } from './audio';
import { useBaresipSuite } from './baresip-suite';

const MODULES = '/usr/lib/baresip/modules';
const HAVE = (m: string) => fs.existsSync('/usr/bin/baresip') && fs.existsSync(path.join(MODULES, m));

describe('edge: HD voice between baresip phones (G.722, Opus): a 6 kHz tone crosses only wideband paths', function () {
  this.timeout(120_000);
  const { tone, phone } = useBaresipSuite(() => !HAVE('g722.so'));

  /**
   * Alice (6 kHz) calls Bob (1 kHz); 4 s of talk; both phones stopped so their WAVs are whole. baresip's
   * aufile wants its file at the call codec's rate: `rates` [alice, bob] (8000 G.711, 16000 G.722, 48000 Opus).
   */
  async function call(aliceModules: string[], bobModules: string[], rates: [number, number], bobCodecs?: string[]): Promise<{ alice: Baresip; bob: Baresip }> {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    if (bobCodecs) await extensionsRepo(await testDb()).update(b.ext.id, { codecs: bobCodecs });
    const alice = await phone(a.ext, a.domain, a.password, tone(6000, rates[0]), aliceModules);
    const bob = await phone(b.ext, b.domain, b.password, tone(1000, rates[1]), bobModules);
    await alice.dial(`sip:${b.ext.username}@${b.domain}`);
    await until(() => (alice.saw('CALL_ESTABLISHED') && bob.saw('CALL_ESTABLISHED')) || null, 15_000, 'call established on both phones').catch((err: Error) => {
      throw new Error(`${err.message}\nalice: ${alice.log.slice(-2000)}\nbob: ${bob.log.slice(-2000)}`);
    });
    await new Promise((r) => setTimeout(r, 4000));
    await alice.hangup();
    await until(() => bob.saw('CALL_CLOSED') || null, 10_000, 'bob sees the hang-up');
    await Promise.all([alice.stop(), bob.stop()]);
    return { alice, bob };
  }

  const logs = (b: Baresip) => b.log;
  /** The codec a phone's log says it encoded its call with ("audio: Set audio encoder: G722 16000Hz 1ch"). */
  const encoder = (b: Baresip) => /Set audio encoder: (\S+)/.exec(b.log)?.[1] ?? '';

  it("G.722 ↔ G.722: Bob hears Alice's 6 kHz tone, Alice hears Bob's 1 kHz", async () => {
    const { alice, bob } = await call(['g722.so'], ['g722.so'], [16000, 16000]);
    expect([encoder(alice), encoder(bob)]).to.deep.equal(['G722', 'G722']);
    expect(bob.heardWav, logs(bob).slice(-2000)).to.not.equal('');
    expect(toneShare(bob.heardWav, 6000), `bob hears 6 kHz over G.722\n${logs(bob).slice(-1500)}`).to.be.greaterThan(0.5);
    expect(toneShare(alice.heardWav, 1000), 'alice hears bob (1 kHz)').to.be.greaterThan(0.5);
  });

  it("G.722 ↔ PCMU (Bob's extension takes PCMU only): transcoded both ways, and the 6 kHz tone is gone at Bob", async () => {
    const { alice, bob } = await call(['g722.so'], ['g722.so'], [16000, 8000], ['PCMU']);
    expect([encoder(alice), encoder(bob)], 'alice keeps G.722, bob is offered PCMU only').to.deep.equal(['G722', 'PCMU']);
    const heard = { alice1k: toneShare(alice.heardWav, 1000), bob6k: toneShare(bob.heardWav, 6000), bob2k: toneShare(bob.heardWav, 2000), bobLoudness: loudness(bob.heardWav) };
    const what = JSON.stringify(heard);
    expect(heard.alice1k, `alice hears bob (1 kHz) through the transcoding ${what}\n${logs(alice).slice(-1500)}`).to.be.greaterThan(0.5);
    // 8 kHz audio cannot carry 6 kHz: the WAV's own rate says so, and nothing of the tone folded down into the band
    expect(heard.bob6k, `no 6 kHz at bob ${what}`).to.equal(0);
    // a fold would be a 2 kHz tone about as loud as Alice's (mean amplitude in the thousands); the 2 kHz
    // share of Bob's near-silence (mean amplitude ~30) is noise and may be 0.1 or more: so the level, not the share
    expect(heard.bob2k * heard.bobLoudness, `no 6 kHz folded to 2 kHz at bob (2 kHz share x mean amplitude) ${what}`).to.be.lessThan(30);
    expect(heard.bobLoudness, `bob hears (almost) nothing of a tone above his band ${what}`).to.be.lessThan(300);
  });

  it('Opus ↔ Opus with telephone-event/8000 (all baresip 1.0 offers): digits keyed on Alice reach Bob', async function () {
    if (!HAVE('opus.so')) this.skip();
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const alice = await phone(a.ext, a.domain, a.password, tone(6000, 48000), ['opus.so']);
    const bob = await phone(b.ext, b.domain, b.password, tone(1000, 48000), ['opus.so']);
    await alice.dial(`sip:${b.ext.username}@${b.domain}`);
    await until(() => (alice.saw('CALL_ESTABLISHED') && bob.saw('CALL_ESTABLISHED')) || null, 15_000, 'call established on both phones');
    expect([encoder(alice), encoder(bob)]).to.deep.equal(['opus', 'opus']);
    for (const key of ['1', '5', '#']) {
      await alice.command('sndcode', key);
      await new Promise((r) => setTimeout(r, 400));
    }
    const keys = () => bob.events.filter((e) => e.type === 'CALL_DTMF_START').map((e) => String(e.param));
    await until(() => keys().length >= 3 || null, 10_000, 'bob gets three digits').catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(keys())}\nalice: ${alice.log.slice(-1500)}\nbob: ${bob.log.slice(-1500)}`);
    });
    expect(keys()).to.deep.equal(['1', '5', '#']);
    await alice.hangup();
    await until(() => bob.saw('CALL_CLOSED') || null, 10_000, 'bob sees the hang-up');
  });

  it("Opus ↔ Opus: Bob hears Alice's 6 kHz tone", async function () {
    if (!HAVE('opus.so')) this.skip();
    const { alice, bob } = await call(['opus.so'], ['opus.so'], [48000, 48000]);
    expect([encoder(alice), encoder(bob)]).to.deep.equal(['opus', 'opus']);
    expect(toneShare(bob.heardWav, 6000), `bob hears 6 kHz over Opus\n${logs(bob).slice(-1500)}`).to.be.greaterThan(0.5);
    expect(toneShare(alice.heardWav, 1000), 'alice hears bob (1 kHz)').to.be.greaterThan(0.5);
  });
});
