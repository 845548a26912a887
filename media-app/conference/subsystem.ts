/**
 * The conference subsystem of a media-app node: hosts conferences (host.ts), serves the
 * conference_join / confbridge_join actions through ctx.services.conferences, and takes the
 * conference commands control-api sends (core/conferences/commands.ts).
 */
import type { Subsystem } from '../subsystem';
import { ConferenceHost, type ConferenceService } from './host';
import { advertiseNodeSip } from '../xnode/address';

declare module '../flow/services' {
  interface FlowServices {
    conferences?: ConferenceService;
  }
}

export const subsystem: Subsystem = {
  name: 'conference',
  async start(ctx) {
    const host = new ConferenceHost(ctx.deps, ctx.factory, ctx.nodeId, ctx.logger);
    // where other nodes send the bridge legs of their calls that join a conference hosted here
    const withdraw = await advertiseNodeSip(ctx.deps.redis, ctx.deps.config.redisKeyPrefix, ctx.nodeId, ctx.deps.srf, ctx.deps.app.outreg.advertisedHost);
    ctx.services.conferences = host;
    ctx.commands.on('conference.start', (c) => host.start(c.conferenceId));
    ctx.commands.on('conference.refresh', async (c) => host.room(c.conferenceId)?.refresh());
    ctx.commands.on('conference.terminate', (c) => host.terminate(c.conferenceId));
    ctx.commands.on('conference.kick', (c) => host.kick(c.conferenceId, c.conferencecallId));
    ctx.commands.on('conference.coach', async (c) => host.room(c.conferenceId)?.recoach(c.conferencecallId));
    ctx.commands.on('conference.modified', async (c) => host.room(c.conferenceId)?.modified(c.conferencecallId));
    // played in the background: the command is taken at once, the callback tells the end
    ctx.commands.on('conference.announce', async (c) => {
      void host.announce(c).catch((err: Error) => ctx.logger.warn({ err: err.message, conference: c.conferenceId }, 'conference announcement not run'));
    });
    ctx.commands.on('conference.mute', async (c) => host.room(c.conferenceId)?.mute(c.conferencecallId, c.direction, c.on));
    ctx.commands.on('conference.recording_start', async (c) => {
      const room = host.room(c.conferenceId) ?? (await host.ensure(c.conferenceId).catch(() => undefined));
      if (room) await room.recordingStart(c.recordingId, c.options);
      else await host.abandonRecording(c.conferenceId, c.recordingId);
    });
    ctx.commands.on('conference.recording_stop', async (c) => {
      const room = host.room(c.conferenceId);
      if (room) await room.recordingStop();
      else await host.abandonRecording(c.conferenceId, null);
    });
    return {
      async stop() {
        await host.stop();
        await withdraw();
        if (ctx.services.conferences === host) delete ctx.services.conferences;
      },
    };
  },
};
