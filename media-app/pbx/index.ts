/** The PBX subsystem of a media-app node: feature codes, park and pickup, the park slots' busy lamps and the supervisor (docs/pbx.md). */
import type { Subsystem } from '../subsystem';
import { runnerFor } from '../groupcall';
import { ParkService } from './park';
import { PbxService } from './service';
import { publishSlotLamps } from './slot-lamps';
import { SupervisorService } from './supervise';
import { supervisions } from '../../core/pbx/supervisions';

declare module '../flow/services' {
  interface FlowServices {
    pbx?: PbxService;
  }
}

export { PbxService, ParkService };

export const subsystem: Subsystem = {
  name: 'pbx',
  async start(ctx) {
    const park = new ParkService(ctx.factory, runnerFor(ctx.factory));
    const supervisor = new SupervisorService(ctx.factory, runnerFor(ctx.factory));
    const service = new PbxService(ctx.factory, park, supervisor, () => ctx.services.queues);
    ctx.services.pbx = service;
    // busy lamp keys on the slots: presence starts before pbx (subsystems.ts)
    const presence = ctx.services.presence;
    const stopLamps = presence ? publishSlotLamps(park, presence, { db: ctx.deps.db, factory: ctx.factory, sipDomain: ctx.deps.config.sipDomain, logger: ctx.logger }) : () => undefined;
    ctx.commands.on('park.call', (c) => park.parkClaimed(c.callId, c.customerId, c.slot));
    ctx.commands.on('park.retrieve', async (c) => {
      await park.retrieveTo(c.customerId, c.slot, c.destination);
    });
    const store = supervisions(ctx.deps.redis, ctx.deps.config.redisKeyPrefix);
    ctx.commands.on('supervise.start', async (c) => {
      const rec = await store.get(c.callId);
      if (rec?.id !== c.supervisionId) return;
      void supervisor.ringAndStart(rec, c.destination).catch((err: Error) => ctx.logger.warn({ err: err.message, call: c.callId }, 'supervise failed'));
    });
    ctx.commands.on('supervise.mode', async (c) => {
      if (supervisor.of(c.callId)?.id === c.supervisionId) await supervisor.setMode(c.callId, c.mode);
    });
    ctx.commands.on('supervise.stop', async (c) => {
      await supervisor.stop(c.callId, c.supervisionId);
    });
    return {
      async stop() {
        await supervisor.stopAll();
        if (ctx.services.pbx === service) delete ctx.services.pbx;
        stopLamps();
        await park.stop();
      },
    };
  },
};
