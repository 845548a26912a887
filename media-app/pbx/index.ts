/** The PBX subsystem of a media-app node: feature codes, park and pickup, and the park slots' busy lamps (docs/pbx.md). */
import type { Subsystem } from '../subsystem';
import { runnerFor } from '../groupcall';
import { ParkService } from './park';
import { PbxService } from './service';
import { publishSlotLamps } from './slot-lamps';

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
    const service = new PbxService(ctx.factory, park);
    ctx.services.pbx = service;
    // busy lamp keys on the slots: presence starts before pbx (subsystems.ts)
    const presence = ctx.services.presence;
    const stopLamps = presence ? publishSlotLamps(park, presence, { db: ctx.deps.db, factory: ctx.factory, sipDomain: ctx.deps.config.sipDomain, logger: ctx.logger }) : () => undefined;
    ctx.commands.on('park.call', (c) => park.parkClaimed(c.callId, c.customerId, c.slot));
    ctx.commands.on('park.retrieve', async (c) => {
      await park.retrieveTo(c.customerId, c.slot, c.destination);
    });
    return {
      async stop() {
        if (ctx.services.pbx === service) delete ctx.services.pbx;
        stopLamps();
        await park.stop();
      },
    };
  },
};
