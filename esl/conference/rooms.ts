/**
 * The switch's conferences by name (mod_conference's conference hash): a room is made by the first
 * `conference` application that names it (its mixer on the media engine, on that channel's worker) and
 * dropped when it ends. Member ids come from one counter for the whole switch, as next_member_id.
 */
import { randomUUID } from 'node:crypto';
import type { Endpoint, MediaServer } from '../../media-engine';
import type { Channel } from '../channel';
import { maintenance } from './events';
import { ConferenceRoom, type RoomHost } from './room';

export class ConferenceRooms {
  private readonly rooms = new Map<string, ConferenceRoom>();
  /** rooms being made: a second application naming one waits for it */
  private readonly opening = new Map<string, Promise<ConferenceRoom>>();
  private lastMemberId = 0;

  constructor(
    private readonly engine: MediaServer,
    readonly host: RoomHost,
  ) {}

  get(name: string): ConferenceRoom | undefined {
    return this.rooms.get(name);
  }

  all(): ConferenceRoom[] {
    return [...this.rooms.values()];
  }

  nextMemberId(): number {
    return ++this.lastMemberId;
  }

  /** The room named `name`, made (conference-create) if there is none; its mixer goes on `near`'s worker. */
  open(name: string, profile: string, near: Endpoint): Promise<ConferenceRoom> {
    const have = this.rooms.get(name);
    if (have) return Promise.resolve(have);
    let p = this.opening.get(name);
    if (!p) {
      // the engine's name is its own: a room that just ended may still hold the mixer of the same name
      p = this.engine.createConference(randomUUID(), { near }).then((media) => {
        const room = new ConferenceRoom(name, profile, media, this.host, (r) => {
          if (this.rooms.get(r.name) === r) this.rooms.delete(r.name);
        });
        this.rooms.set(name, room);
        room.fireRoom('conference-create');
        return room;
      });
      const made = p;
      this.opening.set(name, made);
      void made.then(
        () => this.opening.get(name) === made && this.opening.delete(name),
        () => this.opening.get(name) === made && this.opening.delete(name),
      );
    }
    return p;
  }

  /** join-only with no such room: rejected-join-only with the channel's basic data. */
  rejectedJoinOnly(channel: Channel, name: string, profile: string): void {
    const basic = channel.headers().filter(([k]) => !k.startsWith('variable_'));
    this.host.publish(maintenance(this.host.events, 'rejected-join-only', [...basic, ['Conference-Name', name], ['Conference-Profile-Name', profile]]));
  }
}
