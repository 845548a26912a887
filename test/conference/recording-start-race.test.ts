// Two recording starts that reach one room at once (media-app/conference/room-recording.ts), on both media
// backends: the room records once. The first start takes the room's one recording; the other fails with
// RECORDING_ALREADY_ACTIVE (docs: platform-api "Starting while one is active fails"), its row ended at
// once, never recording, with no file and no recording_started event. The rows are made as POST
// /conferences/{id}/recording_start makes them (initiating; the first holds the conference's slot), and
// both starts are the room's own (its command handler calls it so), not a mock.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { EMPTY_UUID, newId } from '../../core/ids';
import { ApiError } from '../../core/errors';
import { recordingsDir } from '../../core/data-dirs';
import type { RecordingOptions } from '../../core/commands/contracts';
import { conferencesRepo } from '../../core/repos/conferences';
import type { ConferenceHost } from '../../media-app/conference';
import { testDb } from '../../testkit/db';
import type { Fixture } from '../../testkit/api';
import { eventsFor, until, type Platform } from '../../testkit/media-app/harness';
import { terminatedRoom, useConferenceStack } from './support';

const OPTIONS: RecordingOptions = { format: 'wav', end_of_silence: 0, end_of_key: '', duration: 0, on_end_flow_id: EMPTY_UUID };

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`conference recording on the ${backend} media backend: two starts at once`, function () {
    this.timeout(60_000);
    let p: Platform;
    let f: Fixture;
    const api = useConferenceStack({ trunk: 'recrace', mediaServer: backend, parties: [] }, (s) => ({ p, f } = s));

    /** A recording row as the API writes it before it sends the start (core/conferences/api.ts recordingStart). */
    async function initiating(conferenceId: string, recordingId: string): Promise<void> {
      const ids = { id: recordingId, customer_id: f.customer.id, owner_id: EMPTY_UUID, activeflow_id: EMPTY_UUID, on_end_flow_id: EMPTY_UUID };
      await (await testDb())('recordings').insert({ ...ids, reference_type: 'conference', reference_id: conferenceId, status: 'initiating', options: JSON.stringify(OPTIONS), tm_create: new Date() });
    }

    it('one start records; the other fails with RECORDING_ALREADY_ACTIVE, its row ended, no file of it', async () => {
      const made = await api().post('/conferences', { type: 'conference' });
      expect(made.status, JSON.stringify(made.body)).to.equal(200);
      const id = made.body.id as string;
      const host = p.app.factory.services.conferences as ConferenceHost;
      const room = await until(() => host.room(id), 10_000, 'the room hosted');
      const [first, second] = [newId(), newId()];
      expect(await conferencesRepo(await testDb()).claimRecording(id, first), "the conference's slot").to.not.equal(null);
      await initiating(id, first);
      await initiating(id, second);

      const [a, b] = await Promise.allSettled([room.recordingStart(first, OPTIONS), room.recordingStart(second, OPTIONS)]);
      expect(a.status, a.status === 'rejected' ? String(a.reason) : 'the first').to.equal('fulfilled');
      expect(b.status, 'the second').to.equal('rejected');
      const err = (b as PromiseRejectedResult).reason as unknown;
      expect(err).to.be.instanceOf(ApiError);
      expect((err as ApiError).reason).to.equal('RECORDING_ALREADY_ACTIVE');

      const db = await testDb();
      const status = async (rid: string) => ((await db('recordings').where({ id: rid }).first()) as { status: string }).status;
      expect(await status(first), 'the first records').to.equal('recording');
      expect(await status(second), 'the second ended at once').to.equal('ended');
      expect((await conferencesRepo(db).get(id))?.recording_id, 'the slot still the first').to.equal(first);

      await room.recordingStop();
      expect(await status(first)).to.equal('ended');
      const dir = recordingsDir(p.config.dataDir);
      expect(fs.existsSync(path.join(dir, `${first}.wav`)), "the first's file").to.equal(true);
      expect(fs.existsSync(path.join(dir, `${second}.wav`)), 'no file of the second').to.equal(false);
      expect((await eventsFor(p.redis, first)).map((e) => e.event_type)).to.deep.equal(['recording_started', 'recording_finished']);
      expect(
        (await eventsFor(p.redis, second)).map((e) => e.event_type),
        'the second never started',
      ).to.not.include('recording_started');

      expect((await api().del(`/conferences/${id}`)).status).to.equal(200);
      await terminatedRoom(id);
    });
  });
