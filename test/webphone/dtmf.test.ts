// DTMF from the browser phone to a desk phone (issue #32, item 2): the phone in Chromium (JsSIP over
// WebSocket, DTLS-SRTP through a real rtpengine) calls an extension registered by a sipp desk phone
// whose SDP offers telephone-event on payload type 96, which is none of the browser's (Chromium's offer
// has 110 for 48 kHz and 126 for 8 kHz). Keys pressed on the phone's keypad, and a string of keys sent
// by an embedding page's 'dtmf' command, go out as RFC 4733 through WebRTC (RTCDTMFSender); the desk
// phone's media port (a capture on loopback) must get each key as telephone-events on ITS payload type,
// in order, on its own stream (the SSRC of its audio), each with growing durations > 0 and an end packet.
import { expect } from 'chai';
import type { Page } from 'puppeteer-core';
import type { TestBrowser } from '../../testkit/browser';
import { freePort } from '../../testkit/ports';
import { createExtension, sipp, sleep, until, type SippResult } from '../../testkit/media-app/harness';
import { dtmfCallee, eventGroups, RtpCapture, type EventPacket } from '../edge/dtmf-support';
import { newPage, openPhone, signInExtension, useWebrtcRig, waitPhase, waitReg, type Rig } from '../../testkit/webphone/harness';
import { registerPhone } from '../../testkit/media-app/phones';

/** The desk phone's telephone-event payload type: neither of Chromium's. */
const DESK_PT = 96;
/** RFC 4733 event numbers of the keys pressed. */
const EVENT: Record<string, number> = { '0': 0, '1': 1, '2': 2, '3': 3, '4': 4, '5': 5, '6': 6, '7': 7, '8': 8, '9': 9, '*': 10, '#': 11 };

describe('webphone: DTMF from the browser to a desk phone', function () {
  this.timeout(120_000);
  let rig: Rig;
  let b: TestBrowser;
  useWebrtcRig({}, (s) => ({ rig, b } = s));

  /** Presses `keys` on the phone's keypad, one click each, `gapMs` apart (a user keying a number). */
  async function pressKeys(page: Page, keys: string, gapMs: number): Promise<void> {
    for (const k of keys) {
      await page.click(`button[data-key="${k}"]`);
      await sleep(gapMs);
    }
  }

  /** One digit as the desk phone got it: one event throughout, marker first, durations growing, the end last. */
  function expectDigit(group: EventPacket[], event: number, ssrc: number): void {
    const at = `event ${event}`;
    expect(
      group.every((e) => e.event === event),
      `${at}: ${group.map((e) => e.event)}`,
    ).to.equal(true);
    expect(group[0]!.marker, `${at}: marker on the first packet`).to.equal(true);
    expect(
      group.every((e) => e.duration > 0),
      `${at}: durations > 0: ${group.map((e) => e.duration)}`,
    ).to.equal(true);
    const durations = group.filter((e) => !e.end).map((e) => e.duration);
    expect(durations, `${at}: durations grow`).to.deep.equal([...durations].sort((x, y) => x - y));
    const ends = group.filter((e) => e.end);
    expect(ends.length, `${at}: an end packet (E bit)`).to.be.greaterThan(0);
    expect(
      group.slice(-ends.length).every((e) => e.end),
      `${at}: nothing after the end`,
    ).to.equal(true);
    // the phone keys 160 ms (web/phone/phone.ts): 1280 samples of the desk phone's 8 kHz clock, give or
    // take the packetization of the browser's sender (a duration on the browser's 48 kHz clock would be 6x)
    expect(ends[0]!.duration, `${at}: end duration in 8 kHz samples`).to.be.within(960, 1920);
    expect(
      group.every((e) => e.ssrc === ssrc),
      `${at}: the desk phone's stream (SSRC of its audio)`,
    ).to.equal(true);
    for (let i = 1; i < group.length; i++) expect((group[i]!.seq - group[i - 1]!.seq) & 0xffff, `${at}: consecutive sequence numbers`).to.equal(1);
  }

  /** A desk phone: sipp registers extension `desk` from a port and answers there, its media to a capture. */
  async function deskPhone(desk: Awaited<ReturnType<typeof createExtension>>): Promise<{ cap: RtpCapture; done: Promise<SippResult> }> {
    const cap = await RtpCapture.open();
    const phonePort = await freePort();
    const reg = await registerPhone(`127.0.0.1:${rig.p.sipPort}`, desk, '127.0.0.1', phonePort);
    expect(reg.code, reg.errors).to.equal(0);
    const uas = sipp(dtmfCallee(desk.ext.username, cap.port, { telephoneEventPt: DESK_PT }), ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1'], { killAfterMs: 60_000 });
    await sleep(300); // let the UAS bind
    return { cap, done: uas.done };
  }

  /** What the capture holds, per payload type (for a failure's message). */
  const heard = (cap: RtpCapture) => JSON.stringify(cap.packets.reduce<Record<number, number>>((m, x) => ({ ...m, [x.pt]: (m[x.pt] ?? 0) + 1 }), {}));

  /** Waits for audio at the desk phone (the stream the events join), keys the digits, waits for their ends. */
  async function keyDigits(cap: RtpCapture, keys: string, press: () => Promise<void>): Promise<void> {
    await until(async () => cap.packets.filter((x) => x.pt === 0).length > 25 || null, 10_000, 'audio at the desk phone');
    await press();
    await until(async () => eventGroups(cap, DESK_PT).filter((g) => g.some((e) => e.end)).length >= keys.length || null, 10_000, `${keys.length} ended digits at the desk phone`).catch(
      (err: Error) => {
        throw new Error(`${err.message}; packets per payload type: ${heard(cap)}`);
      },
    );
    await sleep(300); // the end packet's repeats
  }

  /** The keys, in order, each on the desk phone's payload type and stream; nothing on any other payload type. */
  function expectDigits(cap: RtpCapture, keys: string): void {
    const audio = cap.packets.filter((x) => x.pt === 0);
    const others = cap.packets.filter((x) => x.pt !== 0 && x.pt !== DESK_PT).map((x) => x.pt);
    expect(others, "nothing on another payload type (the browser's 110/126)").to.deep.equal([]);
    const groups = eventGroups(cap, DESK_PT);
    expect(
      groups.map((g) => g[0]!.event),
      'the keys in order',
    ).to.deep.equal([...keys].map((k) => EVENT[k]));
    groups.forEach((g, i) => expectDigit(g, EVENT[keys[i]!]!, audio[0]!.ssrc));
  }

  it('keypad digits reach a sipp desk phone as telephone-events on its payload type 96, in order, each with an end', async () => {
    const caller = await createExtension();
    const desk = await createExtension(caller.customerId);
    const { cap, done } = await deskPhone(desk);
    const keys = '1#55*09';
    const page = await openPhone(b, rig.base);
    try {
      await signInExtension(page, `${caller.ext.username}@${caller.domain}`, caller.password);
      await waitReg(page, 'registered');
      await page.type('#target', desk.ext.extension);
      await page.click('#call');
      await waitPhase(page, 'connected', 15_000);
      // the browser's leg negotiated Opus (the browser's first codec, issue #34) with telephone-event at
      // Opus's clock on a payload type of its own (110): the relay has to rewrite it to the desk phone's
      // 96 at 8000, not pass it through (the phone's JsSIP session, read in the page)
      const answer = String(await page.evaluate('window.openvoicePhone.session.connection.remoteDescription.sdp'));
      expect(answer, 'the browser leg stays Opus').to.match(/a=rtpmap:\d+ opus\/48000\/2/);
      const browserPt = /a=rtpmap:(\d+) telephone-event\/48000/.exec(answer)?.[1];
      expect(browserPt, `telephone-event in the browser's answer: ${answer}`).to.not.equal(undefined);
      expect(Number(browserPt), "the browser leg's payload type").to.not.equal(DESK_PT);
      await keyDigits(cap, keys, () => pressKeys(page, keys, 450));
      await page.click('#hangup');
      await waitPhase(page, 'ended');
      const r = await done;
      expect(r.code, r.errors + r.messages.slice(-4000)).to.equal(0);
    } finally {
      cap.close();
      await page.close();
    }
    expectDigits(cap, keys);
  });

  it("the embed 'dtmf' command: one string of keys reaches the desk phone key by key on its payload type", async () => {
    const caller = await createExtension();
    const desk = await createExtension(caller.customerId);
    const { cap, done } = await deskPhone(desk);
    const keys = '*73#';
    // an embedding document of control-api's origin frames the phone and drives it by postMessage
    const page = await newPage(b);
    try {
      await page.goto(`${rig.base}/healthz`);
      await page.evaluate(`(() => {
        window.got = [];
        window.addEventListener('message', (e) => window.got.push(e.data));
        const iframe = document.createElement('iframe');
        iframe.src = '/phone/?embed=1&audio_processing=off&ice=loopback';
        iframe.setAttribute('allow', 'microphone; autoplay');
        document.body.appendChild(iframe);
        window.post = (m) => iframe.contentWindow.postMessage({ channel: 'openvoice-phone', ...m }, location.origin);
      })()`);
      const waitEvent = (pred: string, what: string) =>
        page.waitForFunction(`window.got.some((m) => ${pred})`, { timeout: 15_000 }).catch(async (e: Error) => {
          throw new Error(`${e.message}: ${what}; events ${JSON.stringify(await page.evaluate('window.got'))}`);
        });
      const post = async (m: object): Promise<void> => {
        await page.evaluate(`window.post(${JSON.stringify(m)})`);
      };
      await waitEvent(`m.type === 'ready'`, 'ready');
      await post({ command: 'sign-in-extension', uri: `${caller.ext.username}@${caller.domain}`, password: caller.password });
      await waitEvent(`m.type === 'registration' && m.state === 'registered'`, 'registered');
      await post({ command: 'dial', target: desk.ext.extension });
      await waitEvent(`m.type === 'call' && m.call.phase === 'connected'`, 'connected');
      await keyDigits(cap, keys, () => post({ command: 'dtmf', tones: keys }));
      expect(await page.evaluate(`window.got.filter((m) => m.type === 'error')`), 'no command failed').to.deep.equal([]);
      await post({ command: 'hangup' });
      const r = await done;
      expect(r.code, r.errors + r.messages.slice(-4000)).to.equal(0);
    } finally {
      cap.close();
      await page.close();
    }
    expectDigits(cap, keys);
  });
});
