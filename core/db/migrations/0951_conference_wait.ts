import type { Knex } from 'knex';

/**
 * Issue 36: TwiML <Conference> waiting and status callbacks. `tm_start` is when the room started (its
 * first participant entered the mix; a participant with startConferenceOnEnter="false" waits until
 * then, on whichever node its call is). `status_callback` is the room's Twilio statusCallback (URL,
 * method, events: the first participant's that gives one), `callback_seq` its SequenceNumber counter.
 * Each participant keeps how it joined: `start_on_enter`, its `beep`, and `coach_call_id` (the call
 * it coaches: only that participant hears it).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('conferences', (t) => {
    t.timestamp('tm_start', { useTz: true }).nullable();
    t.jsonb('status_callback').nullable();
    t.integer('callback_seq').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('conferencecalls', (t) => {
    t.boolean('start_on_enter').notNullable().defaultTo(true);
    t.text('beep').notNullable().defaultTo('');
    t.uuid('coach_call_id').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('conferencecalls', (t) => {
    t.dropColumn('coach_call_id');
    t.dropColumn('beep');
    t.dropColumn('start_on_enter');
  });
  await knex.schema.alterTable('conferences', (t) => {
    t.dropColumn('callback_seq');
    t.dropColumn('status_callback');
    t.dropColumn('tm_start');
  });
}
