/**
 * What a held party hears (issue 52), first that applies:
 *   1. the hold's own choice: POST /calls/{id}/hold's `music`, Twilio's Participant `HoldUrl`;
 *      '' is a silent hold, a URL is that audio (WAV or MP3) in a loop;
 *   2. the flow's choice for the bridge the party is in: the connect action's `hold_music`
 *      ({url}: that audio, 'none': '', 'default' or absent: no choice);
 *   3. the customer's `moh_url` (PUT /customer/metadata);
 *   4. the node's music (moh-source.ts: a phrase of notes made once with sox).
 * POST /calls/{id}/moh asks for music: it takes the flow's URL but not its 'none'.
 * A URL is fetched by the media engine through the egress policy (core/net); one that cannot be
 * played (refused, not found, not audio) gives way to the node's music, logged, rather than silence.
 */
import type { HoldMusicOption } from '../../core/flow/options/common';
import { customersRepo } from '../../core/repos/customers';
import type { Bridge } from './bridge';
import { mohFile } from '../kit/moh-source';
import { MediaBackendUnsupported } from '../media-server/port';
import type { CallSession } from './session';

/** The flow's choice per bridge it opened (a URL, '' none); a bridge without one is not here. */
const flowChoices = new WeakMap<Bridge, string>();

/** The connect action's `hold_music` for the bridge it opened, for as long as that bridge lasts. */
export function chooseBridgeMusic(bridge: Bridge, option: HoldMusicOption | undefined): void {
  if (option === undefined || option === 'default') return;
  flowChoices.set(bridge, option === 'none' ? '' : option.url);
}

/** The music a hold of `call` plays: `choice` when given, else the flow's, else the customer's, else the node's. */
export async function holdMusicOf(call: CallSession, choice?: string): Promise<string> {
  watchFailures(call);
  if (choice !== undefined) return choice;
  const flow = flowChoiceOf(call);
  return flow !== undefined ? flow : defaultMusicOf(call);
}

/** The music POST /calls/{id}/moh plays: the flow's URL, else the customer's, else the node's. */
export async function mohMusicOf(call: CallSession): Promise<string> {
  watchFailures(call);
  return flowChoiceOf(call) || defaultMusicOf(call);
}

function flowChoiceOf(call: CallSession): string | undefined {
  const bridge = call.bridge;
  return bridge ? flowChoices.get(bridge) : undefined;
}

/** The customer's music, else the node's. */
async function defaultMusicOf(call: CallSession): Promise<string> {
  const customer = await customersRepo(call.deps.db).get(call.row.customer_id);
  const url = customer?.metadata?.moh_url;
  if (typeof url === 'string' && url) return url;
  return mohFile(call.deps.config.dataDir);
}

/**
 * The node's music in place of a customer's or a hold's URL that failed to play. Music the backend
 * refuses to play to the leg now (MediaBackendUnsupported: on fsmrf a leg that entered a switch room
 * meanwhile, fsmrf/room-app.ts) gets no other music, which would be refused as well: logged.
 */
function watchFailures(call: CallSession): void {
  const m = call.mediaState;
  if (m.onMusicFailed) return;
  m.onMusicFailed = (music, err) => {
    if (call.isEnded) return;
    if (err instanceof MediaBackendUnsupported) return call.deps.logger.warn({ call: call.id, err: err.message }, 'music on hold refused by the media backend');
    void mohFile(call.deps.config.dataDir).then(
      (node) => {
        call.deps.logger.warn({ call: call.id, err: err.message, code: (err as { code?: string }).code, fallback: music !== node }, 'music on hold failed to play');
        if (music !== node && m.flags.music === music) return m.set({ music: node });
      },
      (e: Error) => call.deps.logger.warn({ call: call.id, err: e.message }, 'music on hold unavailable'),
    );
  };
}
