/**
 * `conference <room> relate` (mod_conference's conference_api_sub_relate, 1.10): who does not hear whom.
 *
 *   relate <id>[,<id>…] <other>[,<other>…] nospeak|nohear|clear
 *
 * For each pair: `nospeak` the other member does not hear the member, `nohear` the member does not hear
 * the other (both words in one action: both), `clear` removes the relationship. A set replaces the
 * pair's relationship (its flags start again from speak and hear). Replies, a line per pair:
 * `+OK <id>-><other> <action> set`, `+OK relationship <id>-><other> cleared.`, `-ERR relationship
 * <id>-><other> not found.` (either member unknown; for clear, the member). Without an action:
 * `relate` or `relate <id>[,…]` lists `<id> -> <other> SPEAK|NOSPEAK HEAR|NOHEAR NOSENDVIDEO` (`+OK No
 * relationships` when the room has none). A relationship names member ids: a member that joins later
 * is in none until related (no wildcard through the API), and a member's relationships leave with it.
 * `sendvideo` (video only) makes a relationship that changes no audio: this switch has no video.
 */
import type { ConferenceRoom, Relation } from './room';

/** C's atoi as an unsigned id (mod_conference prints ids with %u). */
const id = (s: string): number => (Number.parseInt(/^\s*[+-]?\d+/.exec(s)?.[0] ?? '0', 10) || 0) >>> 0;

/** switch_separate_string on ',' (at most 100), each an id. */
const ids = (s: string): number[] => s.split(',').slice(0, 100).map(id);

const flagLine = (from: number, to: number, r: Relation) => `${from} -> ${to} ${r.speak ? 'SPEAK ' : 'NOSPEAK '}${r.hear ? 'HEAR ' : 'NOHEAR '}NOSENDVIDEO \n`;

/** The relationships of the members named (0: every member), as _conference_api_sub_relate_show_member_relationships prints them. */
function show(room: ConferenceRoom, arg: string | undefined): string {
  if (!room.relationshipTotal) return '+OK No relationships\n';
  // `relate` alone with relationships prints nothing (FreeSWITCH's argc == 3 test)
  if (arg === undefined) return '';
  let out = '';
  for (const want of ids(arg))
    for (const m of room.members.values()) {
      if (want > 0 && m.id !== want) continue;
      for (const [other, r] of m.relations) out += flagLine(m.id, other, r);
    }
  return out;
}

/** relate's reply; null prints the syntax (too few arguments, no action it knows). */
export function relate(room: ConferenceRoom, argv: string[]): string | null {
  if (argv.length <= 3) return show(room, argv[2]);
  if (argv.length <= 4) return null;
  const action = argv[4]!;
  const nospeak = action.includes('nospeak');
  const nohear = action.includes('nohear');
  const sendvideo = action.includes('sendvideo');
  const clear = action.toLowerCase() === 'clear';
  if (!(clear || nospeak || nohear || sendvideo)) return null;
  const pairs = ids(argv[2]!).flatMap((a) => ids(argv[3]!).map((b) => [a, b] as const));
  if (clear) {
    const found = room.unrelate(pairs);
    return pairs.map(([a, b], i) => (found[i] ? `+OK relationship ${a}->${b} cleared.\n` : `-ERR relationship ${a}->${b} not found.\n`)).join('');
  }
  // nospeak also clears the member's talking flag (room.ts relate)
  const found = room.relate(pairs, { speak: !nospeak, hear: !nohear });
  return pairs.map(([a, b], i) => (found[i] ? `+OK ${a}->${b} ${action} set\n` : `-ERR relationship ${a}->${b} not found.\n`)).join('');
}
