// Waits on a customer's conference rows: the room a name made, and how many of its participants stand in a
// status. The suites that place callers into rooms (TwiML, the Twilio REST API) share them.
import { testDb } from '../db';
import { until } from '../media-app/harness';

export interface RoomRow {
  id: string;
  status: string;
  ends_when_empty: boolean;
}

/** The customer's newest room named `name`, once it exists (20 s). */
export async function newestRoom(customerId: string, name: string): Promise<RoomRow> {
  const db = await testDb();
  return until(async () => ((await db('conferences').where({ customer_id: customerId, name }).orderBy('tm_create', 'desc').first()) as RoomRow | undefined) ?? null, 20_000, `room ${name}`);
}

/** Resolves once exactly `n` participants of the room stand in `status` (20 s). */
export async function participantsIn(conferenceId: string, n: number, status: 'joining' | 'joined' = 'joined'): Promise<void> {
  const db = await testDb();
  await until(async () => ((await db('conferencecalls').where({ conference_id: conferenceId, status })).length === n ? true : null), 20_000, `${n} ${status}`);
}

/** Resolves with the id of the customer's newest room named `name` once exactly `n` of its participants are joined (20 s). */
export async function joinedRoom(customerId: string, name: string, n: number): Promise<string> {
  const db = await testDb();
  return until(
    async () => {
      const room = (await db('conferences').where({ customer_id: customerId, name }).orderBy('tm_create', 'desc').first()) as { id: string } | undefined;
      if (!room) return null;
      return (await db('conferencecalls').where({ conference_id: room.id, status: 'joined' })).length === n ? room.id : null;
    },
    20_000,
    `${n} joined ${name}`,
  );
}
