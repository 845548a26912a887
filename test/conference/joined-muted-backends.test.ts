// A call muted on its own before it enters a conference (conference_join `muted`: the call's mute,
// direction in, set before its confbridge_join; Twilio's Participant Muted is that same call mute) on
// both media backends: 'embedded' (media-engine's mixer) and 'fsmrf' (the switch's conference through
// drachtio-fsmrf, our switch). In the room the others do not hear it; the room's own unmute of it
// (DELETE /conferencecalls/{id}/mute) does not lift the call's mute (the embedded engine keeps the
// two apart: the endpoint's mute and the mixer member's); the call's own unmute (DELETE /calls/{id}/mute,
// Participant Muted=false) does, and the others hear it again. On fsmrf the call's mute before the room
// was the channel's uuid_audio mute, which the member's unmute in the room left in place.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { conferencesRepo } from '../../core/repos/conferences';
import { testDb } from '../../testkit/db';
import type { Fixture } from '../../testkit/api';
import { sipp, until, type Platform } from '../../testkit/media-app/harness';
import { RtpParty } from '../../testkit/conference/party';
import { uacWaitsForBye } from './sipp';
import { useConferenceStack } from './support';

const A = 500;
const B = 1100;
/** Share of 20 ms frames that must carry a party's tone for "hears it" (conference.test.ts says why it is well below 1). */
const HEARS = 0.5;

const BACKENDS = [
  { backend: 'embedded', prefix: '+8992410' },
  { backend: 'fsmrf', prefix: '+8992420' },
] as const;

for (const { backend, prefix } of BACKENDS)
  describe(`a call muted before it joins a conference, on the ${backend} media backend`, function () {
    this.timeout(90_000);
    let p: Platform;
    let f: Fixture;
    const parties: RtpParty[] = [];
    const api = useConferenceStack({ trunk: 'confm', mediaServer: backend, parties }, (s) => ({ p, f } = s));

    /** Waits for `x` to hear `freq` again (`on`) or no more, then the share of its next 50 frames carrying it. */
    async function hears(x: RtpParty, freq: number, on: boolean): Promise<number> {
      await x.toneTurns(freq, on, 10_000);
      const t0 = Date.now();
      await x.framesHeard(t0, 50);
      return x.presence(freq, t0, Date.now());
    }

    it("stays muted in the room through the room's unmute; the call's own unmute lets the others hear it", async () => {
      const db = await testDb();
      const conf = await conferencesRepo(db).create({ customer_id: f.customer.id, type: 'conference', name: `${backend} muted join`, ends_when_empty: true });
      const flowOf = async (muted: boolean) =>
        flowsRepo(db).create({
          customer_id: f.customer.id,
          actions: parseActions([{ type: 'answer' }, { type: 'conference_join', option: { conference_id: conf.id, muted } }, { type: 'sleep', option: { duration: 60_000 } }, { type: 'hangup' }]),
        } as never);
      const [muted, plain] = [await flowOf(true), await flowOf(false)];
      await numbersRepo(db).create({ customer_id: f.customer.id, number: `${prefix}00001`, type: 'virtual', call_flow_id: muted.id });
      await numbersRepo(db).create({ customer_id: f.customer.id, number: `${prefix}00002`, type: 'virtual', call_flow_id: plain.id });
      const [a, b] = await Promise.all([A, B].map((hz) => RtpParty.open(hz)));
      parties.push(a!, b!);
      const dial = (x: RtpParty, number: string) =>
        sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, `+1555000${x.freq}`, x.port), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '90s'], { killAfterMs: 95_000 })
          .done;
      const calls = [dial(a!, `${prefix}00001`), dial(b!, `${prefix}00002`)];
      const joined = await until(
        async () => {
          const rows = await db('conferencecalls').where({ conference_id: conf.id, status: 'joined' });
          return rows.length === 2 ? rows : null;
        },
        20_000,
        'both joined',
      );
      const callOf = async (x: RtpParty) =>
        (
          (await db('calls')
            .where({ customer_id: f.customer.id })
            .whereRaw(`source->>'target' = ?`, [`+1555000${x.freq}`])
            .orderBy('tm_create', 'desc')
            .first()) as { id: string }
        ).id;
      const aCall = await callOf(a!);
      const aCc = joined.find((r) => r.reference_id === aCall)!.id as string;

      // A hears B (the room is up); B does not hear A, muted as it joined
      expect(await hears(a!, B, true), 'A hears B').to.be.greaterThan(HEARS);
      const t0 = Date.now();
      await b!.framesHeard(t0, 50);
      expect(b!.presence(A, t0, Date.now()), 'B does not hear A, joined muted').to.be.lessThan(0.1);

      // the room's own unmute of A: the call's mute still stands
      expect((await api().del(`/conferencecalls/${aCc}/mute`, { direction: 'in' })).status).to.equal(200);
      const t1 = Date.now();
      await b!.framesHeard(t1, 50);
      expect(b!.presence(A, t1, Date.now()), "B does not hear A after the room's unmute").to.be.lessThan(0.1);

      // the call's own unmute (Participant Muted=false): B hears A
      const un = await api().del(`/calls/${aCall}/mute`, { direction: 'in' });
      expect(un.status, JSON.stringify(un.body)).to.equal(200);
      expect(await hears(b!, A, true), "B hears A after the call's unmute").to.be.greaterThan(HEARS);

      for (const id of [aCall, await callOf(b!)]) expect((await api().post(`/calls/${id}/hangup`)).status).to.equal(200);
      for (const r of await Promise.all(calls)) expect(r.code, r.errors + r.messages).to.equal(0);
    });
  });
