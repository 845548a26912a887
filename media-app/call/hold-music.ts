/**
 * What a held party hears (issue 52), first that applies:
 *   1. the hold's own choice: POST /calls/{id}/hold's `music`, Twilio's Participant `HoldUrl`;
 *      '' is a silent hold, a URL is that audio (WAV or MP3) in a loop;
 *   2. the customer's `moh_url` (PUT /customer/metadata);
 *   3. the node's music (moh-source.ts: a phrase of notes made once with sox).
 * A URL is fetched by the media engine through the egress policy (core/net); one that cannot be
 * played (refused, not found, not audio) gives way to the node's music, logged, rather than silence.
 */
import { customersRepo } from '../../core/repos/customers';
import { mohFile } from '../kit/moh-source';
import type { CallSession } from './session';

/** The music a hold of `call` plays: `choice` when given, else the customer's, else the node's. */
export async function holdMusicOf(call: CallSession, choice?: string): Promise<string> {
  watchFailures(call);
  if (choice !== undefined) return choice;
  const customer = await customersRepo(call.deps.db).get(call.row.customer_id);
  const url = customer?.metadata?.moh_url;
  if (typeof url === 'string' && url) return url;
  return mohFile(call.deps.config.dataDir);
}

/** The node's music in place of a customer's or a hold's URL that failed to play. */
function watchFailures(call: CallSession): void {
  const m = call.mediaState;
  if (m.onMusicFailed) return;
  m.onMusicFailed = (music, err) => {
    if (call.isEnded) return;
    void mohFile(call.deps.config.dataDir).then(
      (node) => {
        call.deps.logger.warn({ call: call.id, err: err.message, code: (err as { code?: string }).code, fallback: music !== node }, 'music on hold failed to play');
        if (music !== node && m.flags.music === music) return m.set({ music: node });
      },
      (e: Error) => call.deps.logger.warn({ call: call.id, err: e.message }, 'music on hold unavailable'),
    );
  };
}
