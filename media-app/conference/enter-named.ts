/**
 * conference_join's way into a room (services.conferences.enterRoom): by id, or by name (the customer's
 * live room of that name, made on the first join). A room found by name that ended between the lookup
 * and the join is looked up once more, which makes a new one; a full room (Twilio's 16020) is an
 * answer, not an error, so the flow goes on.
 */
import { ConferenceError, ConferenceFull, type ConferenceService, type EnterRequest } from './host';

/** Which room to enter: `conferenceId`, else the one called `name`. */
export type RoomChoice = { conferenceId: string } | { name: string; maxParticipants?: number };

export type Entered = Awaited<ReturnType<ConferenceService['enter']>>;

export type EnterRoomResult = { kind: 'entered'; conferenceId: string; entered: Entered } | { kind: 'full'; conferenceId: string };

export async function enterRoom(service: ConferenceService, room: RoomChoice, req: Omit<EnterRequest, 'conferenceId'>): Promise<EnterRoomResult> {
  const resolve = () => ('conferenceId' in room ? Promise.resolve(room.conferenceId) : service.named(req.customerId, room.name, room.maxParticipants));
  let conferenceId = await resolve();
  try {
    try {
      return { kind: 'entered', conferenceId, entered: await service.enter({ ...req, conferenceId }) };
    } catch (err) {
      if ('conferenceId' in room || !(err instanceof ConferenceError) || err instanceof ConferenceFull) throw err;
      conferenceId = await resolve();
      return { kind: 'entered', conferenceId, entered: await service.enter({ ...req, conferenceId }) };
    }
  } catch (err) {
    if (err instanceof ConferenceFull) return { kind: 'full', conferenceId };
    throw err;
  }
}
