// fsmrf's connectCaller for a call from a real SIP phone: baresip (loopback, a 600 Hz tone as its
// microphone) calls the drachtio-srf application fsmrf's Srf serves; the application connects the caller
// to our switch (`ms.connectCaller(req, res)`: the endpoint made with the phone's SDP, the phone answered
// with the endpoint's), plays a 440 Hz prompt the phone hears, and records what the phone says.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import { readWav } from '../../testkit/media-engine/support';
import { toneShare as shareIn } from '../../testkit/media-engine/far-end';
import { until } from '../../testkit/media-app/harness';
import { Baresip } from '../../testkit/baresip';
import { toneShare, toneWav } from '../edge/audio';
import { startFsmrfRig, type FsmrfRig } from '../../testkit/esl/switch-rig';

const HAVE_BARESIP = fs.existsSync('/usr/bin/baresip');

interface Dialog {
  on(e: string, f: () => void): void;
  local: { sdp: string };
}

(HAVE_BARESIP ? describe : describe.skip)('esl: fsmrf connectCaller for a call from baresip', function () {
  this.timeout(60_000);
  let rig: FsmrfRig;
  let phone: Baresip | undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esl-caller-'));

  before(async () => {
    rig = await startFsmrfRig();
  });
  after(async () => {
    await phone?.dispose();
    await rig?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the phone hears the prompt played on the endpoint; the endpoint records the phone; the hang-up ends the channel', async () => {
    const mic = path.join(dir, 'mic600.wav');
    toneWav(mic, 600);
    const prompt = path.join(dir, 'prompt440.wav');
    toneWav(prompt, 440);
    const recorded = path.join(dir, 'caller.wav');
    let settle!: (e?: Error) => void;
    const handled = new Promise<void>((resolve, reject) => (settle = (e) => (e ? reject(e) : resolve())));
    rig.appSrf.invite((req: { body: string }, res: unknown) => {
      void (async () => {
        const { endpoint, dialog } = (await rig.ms.connectCaller(req, res)) as { endpoint: FsEndpoint; dialog: Dialog };
        dialog.on('destroy', () => void endpoint.destroy().catch(() => undefined));
        // the endpoint was made with the phone's offer, and the phone was answered with the endpoint's SDP
        expect(endpoint.remote.sdp).to.equal(req.body);
        expect(dialog.local.sdp).to.equal(endpoint.local.sdp);
        // a 30 s tone, stopped after 2 s (playback_timeout_sec)
        await endpoint.play({ file: prompt, timeoutSecs: 2 });
        await endpoint.record(recorded, { timeLimitSecs: 2 });
      })().then(() => settle(), settle);
    });
    phone = await Baresip.start({ user: 'caller', domain: '127.0.0.1', password: 'unused', outboundProxy: `sip:127.0.0.1:${rig.appSipPort}`, register: false }, mic);
    await phone.dial(`sip:ivr@127.0.0.1:${rig.appSipPort}`);
    const p = phone;
    await until(() => p.saw('CALL_ESTABLISHED') || null, 15_000, 'the call is established').catch((e: Error) => {
      throw new Error(`${e.message}\n${p.log.slice(-3000)}`);
    });
    await handled;
    expect(rig.esl.sessions.count).to.equal(1);
    await phone.hangup();
    await until(() => rig.esl.sessions.count === 0 || null, 10_000, 'the channel ends with the phone hanging up');
    await phone.stop();
    expect(toneShare(phone.heardWav, 440), 'the phone hears the prompt (440 Hz)').to.be.above(0.5);
    expect(shareIn(readWav(recorded).samples, 600, 8000), 'the recording holds the phone (600 Hz)').to.be.above(0.5);
  });
});
