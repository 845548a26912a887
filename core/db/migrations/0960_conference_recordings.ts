import type { Knex } from 'knex';

/**
 * Issue 36: TwiML <Conference record="record-from-start">. `twilio_record` is the room's recording
 * request (the first participant's that asks for one: its recordingStatusCallback, method, events),
 * and, once the room has started and its recording was made, that recording's id (one per room).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('conferences', (t) => {
    t.jsonb('twilio_record').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('conferences', (t) => {
    t.dropColumn('twilio_record');
  });
}
