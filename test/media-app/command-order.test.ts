// The node's command queue runs up to 50 commands at once (media-app/app.ts). Commands about one call
// must still act in the order they were taken: a redelivered "mute" whose write finished after the
// "unmute" sent after it left the call muted (CI on 46e485b, test/media-app/outbound.test.ts).
import { expect } from 'chai';
import pino from 'pino';
import { CommandHandler } from '../../media-app/commands';
import type { CommandEnvelope, MediaCommand } from '../../core/commands/contracts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const envelope = (command: MediaCommand, n: number, issuedAt = new Date()): CommandEnvelope => ({ commandId: `c${n}`, issuedAt: issuedAt.toISOString(), command });

describe('media-app command order', () => {
  // the built-in commands need a CallFactory; a subsystem's own command type does not
  function handler(log: string[]) {
    const h = new CommandHandler({} as never, pino({ level: 'silent' }));
    // the first command of a call is the slowest: without ordering it would act last
    h.on('call.silence', async (c) => {
      await sleep(c.on ? 60 : 5);
      log.push(`${c.callId}:${c.on ? 'on' : 'off'}`);
    });
    return h;
  }

  it('commands about one call act one after another, in the order they were taken', async () => {
    const log: string[] = [];
    const h = handler(log);
    await Promise.all([
      h.handle(envelope({ type: 'call.silence', callId: 'A', on: true } as MediaCommand, 1)),
      h.handle(envelope({ type: 'call.silence', callId: 'A', on: false } as MediaCommand, 2)),
      h.handle(envelope({ type: 'call.silence', callId: 'A', on: true } as MediaCommand, 3)),
    ]);
    expect(log).to.deep.equal(['A:on', 'A:off', 'A:on']);
  });

  it('so do commands about one conference member', async () => {
    const log: string[] = [];
    const h = new CommandHandler({} as never, pino({ level: 'silent' }));
    h.on('conference.mute', async (c) => {
      await sleep(c.on ? 60 : 5);
      log.push(c.on ? 'on' : 'off');
    });
    const mute = (on: boolean, n: number) => h.handle(envelope({ type: 'conference.mute', conferenceId: 'K', conferencecallId: 'M', direction: 'both', on } as MediaCommand, n));
    await Promise.all([mute(true, 1), mute(false, 2)]);
    expect(log).to.deep.equal(['on', 'off']);
  });

  it('commands about different calls do not wait for each other', async () => {
    const log: string[] = [];
    const h = handler(log);
    await Promise.all([
      h.handle(envelope({ type: 'call.silence', callId: 'A', on: true } as MediaCommand, 1)),
      h.handle(envelope({ type: 'call.silence', callId: 'B', on: false } as MediaCommand, 2)),
    ]);
    expect(log).to.deep.equal(['B:off', 'A:on']);
  });

  it('a failed command does not stop the next one for the same call, and still fails its own job', async () => {
    const log: string[] = [];
    const h = new CommandHandler({} as never, pino({ level: 'silent' }));
    h.on('call.silence', async (c) => {
      await sleep(c.on ? 30 : 1);
      if (c.on) throw new Error('refused');
      log.push('off');
    });
    const [first, second] = await Promise.allSettled([
      h.handle(envelope({ type: 'call.silence', callId: 'A', on: true } as MediaCommand, 1)),
      h.handle(envelope({ type: 'call.silence', callId: 'A', on: false } as MediaCommand, 2)),
    ]);
    expect(first.status).to.equal('rejected');
    expect(second.status).to.equal('fulfilled');
    expect(log).to.deep.equal(['off']);
  });

  it('a state command issued before the last one applied for that state (a retry) is skipped; other commands never are', async () => {
    const log: string[] = [];
    const h = handler(log);
    h.on('call.talk', async (c) => void log.push(`talk ${c.text}`));
    const t0 = new Date(Date.now() - 1000);
    const t1 = new Date(Date.now() - 500);
    // "off" issued at t1 is applied; the retry of "on", issued at t0, comes after it
    await h.handle(envelope({ type: 'call.silence', callId: 'A', on: false } as MediaCommand, 2, t1));
    await h.handle(envelope({ type: 'call.silence', callId: 'A', on: true } as MediaCommand, 1, t0));
    // another call, or the same call's other commands, are not affected
    await h.handle(envelope({ type: 'call.silence', callId: 'B', on: true } as MediaCommand, 3, t0));
    await h.handle(envelope({ type: 'call.talk', callId: 'A', text: 'hi', language: 'en-US', provider: 'espeak', voiceId: '' }, 4, t0));
    // issued at the same time (the same command redelivered, or two in one millisecond): applied in the order taken
    await h.handle(envelope({ type: 'call.silence', callId: 'A', on: true } as MediaCommand, 5, t1));
    expect(log).to.deep.equal(['A:off', 'B:on', 'talk hi', 'A:on']);
  });

  it('a hangup does not wait behind a slow command of its call', async () => {
    const log: string[] = [];
    const call = { hangup: async () => void log.push('hangup') };
    const h = new CommandHandler({ get: () => call } as never, pino({ level: 'silent' }));
    h.on('call.silence', async () => {
      await sleep(80); // a re-INVITE the phone takes its time to answer
      log.push('silence');
    });
    await Promise.all([h.handle(envelope({ type: 'call.silence', callId: 'A', on: true } as MediaCommand, 1)), h.handle(envelope({ type: 'call.hangup', callId: 'A' }, 2))]);
    expect(log).to.deep.equal(['hangup', 'silence']);
  });
});
