// Many Twilio Media Streams at once (issue 36's benchmark at a bounded count): 100 `<Connect><Stream>`
// calls placed by one sipp within two seconds into one media-app node all reach in-progress, every stream
// starts with its call's callSid, carries the caller's audio at about 50 `media` a second, and plays
// what its server sends back to its own caller; hanging up ends them all.
import { expect } from 'chai';
import { pcmToMulawBase64 } from '../../core/streams/twilio';
import { callSid } from '../../core/twilio/sids';
import { truncateAll } from '../../testkit/db';
import type { Fixture } from '../../testkit/api';
import { portBlock } from '../../testkit/ports';
import { killAllSipp, sleep, until } from '../../testkit/media-app/harness';
import { customerWithTrunk, pcmBuffer, placeCalls, startStack, tone, type PlacedCall, type Stack } from '../../testkit/streams/support';
import { twilioApp, type TwilioApp, type TwilioConn } from '../../testkit/streams/twilio';

const CALLS = 100;

describe('media streams: 100 Twilio streams placed at once', function () {
  this.timeout(240_000);
  let stack: Stack;
  let owner: Fixture;
  let app: TwilioApp;
  const calls: PlacedCall[] = [];

  before(async () => {
    await truncateAll();
    // two RTP ports a call and room to spare
    const rtp = portBlock('platformRtp', 400);
    stack = await startStack({ RTP_PORT_MIN: String(rtp.min), RTP_PORT_MAX: String(rtp.max) });
    owner = await customerWithTrunk(stack.api);
    app = await twilioApp('/many');
  });
  after(async () => {
    for (const c of calls) c.peer.close();
    killAllSipp();
    await app?.close();
    await stack?.close();
  });

  it('every call reaches in-progress, every stream starts, carries the caller and plays its server', async () => {
    const flow = [{ type: 'answer' }, { type: 'external_media_start', option: { url: app.url, encapsulation: 'twilio', wait: true } }, { type: 'hangup' }];
    calls.push(...(await placeCalls(stack, owner.customer.id, flow, CALLS, { killAfterMs: 200_000 })));
    expect(calls.every((c) => c.live.status === 'progressing')).to.equal(true);

    await until(() => app.conns.filter((c) => c.of('start').length).length === CALLS, 30_000, 'every stream started');
    const bySid = new Map<string, TwilioConn>();
    for (const c of app.conns) bySid.set(String((c.of('start')[0]!.start as { callSid: string }).callSid), c);
    const conns = calls.map((c) => bySid.get(callSid(c.callId)));
    expect(conns.filter((c) => !c).length, 'calls without their stream').to.equal(0);

    // the caller's audio: about 50 `media` a second on every stream (half of that at least, under load)
    const before = conns.map((c) => c!.of('media').length);
    await sleep(2000);
    const got = conns.map((c, i) => c!.of('media').length - before[i]!);
    expect(Math.min(...got), `media per stream over 2 s: ${got.join(',')}`).to.be.at.least(50);

    // each server's 300 ms of tone is heard by its own caller
    const heard = calls.map((c) => c.peer.levels.length);
    const payload = pcmToMulawBase64(Buffer.concat(Array.from({ length: 15 }, (_, n) => pcmBuffer(tone(n, 500)))));
    for (const c of conns) c!.send({ event: 'media', media: { payload } });
    await sleep(1500);
    const voiced = calls.map((c, i) => c.peer.voiced(heard[i]!));
    expect(Math.min(...voiced), `voiced packets per caller: ${voiced.join(',')}`).to.be.at.least(10);

    // the servers hang up: each flow goes on to its hangup, and sipp answers the BYE
    for (const c of conns) c!.ws.close(1000, 'done');
    const result = await calls[0]!.sipp;
    expect(result.code, result.errors.slice(0, 400)).to.equal(0);
  });
});
