/**
 * Coaching in a switch room (fsmrf/conference.ts): the coach is heard by the coached member only and
 * hears everyone, as Twilio's `coaching` / `callSidToCoach` and the engine's whisper. FreeSWITCH has no
 * whisper; mod_conference's `relate` does it (conference_api_sub_relate, 1.10):
 *
 *   conference <room> relate <coach> <every other member but the coached>[,…] nospeak
 *
 * (`nospeak`: those members do not hear the coach; the coach's own hearing is untouched), and `relate
 * <coach> <coached> clear` so a change of the coached member is heard at once. A relationship names
 * member ids and the API has no wildcard, so a member that joins after the coach would hear it: each
 * member that enters (its add-member, when the mix's join resolves) is related `nospeak` to every coach
 * coaching someone else, before anything else is done for it (it may hear the coach for that one
 * command's round trip). Stopping (Coaching=false) clears the coach's relationships with every member.
 * A coach's relationships leave with it (the switch drops them), and so does its entry here. The
 * operations run one at a time, each with the room's members as they stand when it runs; more than
 * 100 members go in several commands (the switch splits at most 100 ids).
 *
 * Unlike the engine, whose recorded mix leaves a whisper out, the switch's recording of the room has
 * the coach in it (its recording hears every member).
 */
import { replyText } from './esl-arg';

/** switch_separate_string's limit on the ids of one relate. */
const MAX_IDS = 100;

/** A line relate answers that is no failure: a pair set or cleared, or a member gone meanwhile. */
const FINE = /^(\+OK .*|-ERR relationship \d+->\d+ not found\.)$/;

export class RoomCoaching {
  /** the coached member's channel uuid by its coach's (a coached member may enter after its coach) */
  private readonly coaches = new Map<string, string>();
  private queue: Promise<unknown> = Promise.resolve();

  /** `relate`: `conference <room> relate <args>`'s reply body; `members`: the room's member ids by channel uuid, now. */
  constructor(
    private readonly room: string,
    private readonly relate: (args: string) => Promise<string>,
    private readonly members: () => ReadonlyMap<string, number>,
  ) {}

  /** The member of channel `coach` is heard by that of `coached` only; null: by every member again. */
  coach(coach: string, coached: string | null): Promise<void> {
    return this.serial(async () => {
      const ms = this.members();
      const id = ms.get(coach);
      if (coached === null) this.coaches.delete(coach);
      else this.coaches.set(coach, coached);
      if (id === undefined) return;
      const others = [...ms].filter(([uuid]) => uuid !== coach);
      if (coached === null)
        return this.run(
          id,
          others.map(([, o]) => o),
          'clear',
        );
      const target = ms.get(coached);
      // the clear also tells whether the switch has the coach (clear looks only at the member named first)
      if (target !== undefined) await this.run(id, [target], 'clear', true);
      await this.run(
        id,
        others.filter(([uuid]) => uuid !== coached).map(([, o]) => o),
        'nospeak',
      );
    });
  }

  /** The member of channel `uuid` entered: no coach but its own is heard by it. */
  joined(uuid: string): Promise<void> {
    return this.serial(async () => {
      const ms = this.members();
      const id = ms.get(uuid);
      if (id === undefined) return;
      for (const [coach, coached] of this.coaches) {
        const c = ms.get(coach);
        if (c !== undefined && coach !== uuid && coached !== uuid) await this.run(c, [id], 'nospeak');
      }
    });
  }

  /** The member of channel `uuid` left: as a coach it is forgotten (its relationships went with it on the switch). */
  left(uuid: string): void {
    this.coaches.delete(uuid);
  }

  private serial(op: () => Promise<void>): Promise<void> {
    const next = this.queue.then(op);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * `relate <coach> <ids> <action>`, at most MAX_IDS ids a command; a line that is no success (FINE)
   * rejects with the reply. `coachThere`: the coach must be in the room: a `clear` whose member (the
   * coach) the switch does not know (`-ERR relationship <coach>->… not found.`: conference_api_sub_relate's
   * clear looks only at it) rejects, naming the coach. A `nospeak`'s not found cannot say which member is
   * missing (a member gone meanwhile is no failure).
   */
  private async run(coach: number, ids: number[], action: 'nospeak' | 'clear', coachThere = false): Promise<void> {
    for (let i = 0; i < ids.length; i += MAX_IDS) {
      const args = `${coach} ${ids.slice(i, i + MAX_IDS).join(',')} ${action}`;
      const body = await this.relate(args);
      const bad = body.split('\n').filter((l) => l && !FINE.test(l));
      if (bad.length || !body.trim()) throw new Error(`conference ${this.room} relate ${args}: ${replyText(body) || 'no answer'}`);
      if (coachThere && body.includes(`-ERR relationship ${coach}->`))
        throw new Error(`conference ${this.room} relate ${args}: the switch has no member ${coach} (the coach) in the room: ${replyText(body)}`);
    }
  }
}
