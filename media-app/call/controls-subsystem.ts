/** The call controls (controls.ts) as a subsystem: their commands from control-api, on the node owning the call. */
import type { Subsystem } from '../subsystem';
import { CallControls } from './controls';
import { onInDialogRequest } from './in-dialog';
import { watchPeerHold } from './peer-hold';

export const subsystem: Subsystem = {
  name: 'call-controls',
  async start(ctx) {
    const controls = new CallControls(ctx.logger);
    // a phone that holds its call: the party bridged to it hears the music on hold
    onInDialogRequest(ctx.deps, 'modify', watchPeerHold);
    const live = (callId: string) => {
      const call = ctx.factory.get(callId);
      return call && !call.isEnded ? call : null;
    };
    const run = async (callId: string, what: string, op: (call: NonNullable<ReturnType<typeof live>>) => Promise<void>) => {
      const call = live(callId);
      if (!call) return;
      // a refused re-INVITE or a call that ends meanwhile is not worth a redelivery: logged
      await op(call).catch((err: Error) => ctx.logger.info({ err: err.message, call: callId }, `${what} failed`));
    };
    ctx.commands.on('call.hold', (c) => run(c.callId, 'hold', (call) => controls.hold(call, c.on, c.music)));
    ctx.commands.on('call.moh', (c) => run(c.callId, 'music on hold', (call) => controls.moh(call, c.on)));
    ctx.commands.on('call.silence', (c) => run(c.callId, 'silence', (call) => controls.silence(call, c.on)));
    ctx.commands.on('call.talk', async (c) => {
      const call = live(c.callId);
      if (call) controls.talk(call, { text: c.text, language: c.language, provider: c.provider, voiceId: c.voiceId });
    });
    return { async stop() {} };
  },
};
