/**
 * Two far ends' endpoints on one media server, bridged to each other: the set-up of the suites that check a
 * leg's RTP path with the C legs on and off (test/media-engine/c-legs.test.ts, strict-rtp.test.ts), and the
 * bounded wait on a leg's stats they use in place of fixed sleeps (testkit/poll.ts `within` for the rest).
 */
import { expect } from 'chai';
import type { Endpoint, EndpointStats, MediaServer } from '../../media-engine';
import { pcmuOffer } from './support';
import { within } from '../poll';

/** The endpoint's stats once `done` holds for them, or the last read after `ms` (the caller's expectations then say what is missing). */
export async function statsWhen(ep: Endpoint, done: (st: EndpointStats) => boolean, ms = 3000): Promise<EndpointStats> {
  let st = await ep.getStats();
  await within(async () => done((st = await ep.getStats())), ms);
  return st;
}

/**
 * epA answering far end A's offer at `aPort`, epB far end B's at `bPort` (on epA's worker), bridged; `inC`: the pair
 * is then served in C (MediaServerOptions.plainLegsInC), which it moves to at the worker's next slot-0 tick: waited for.
 * No in-band detection: a leg with it stays in JS until its far end sends a telephone-event.
 */
export async function bridgedPair(ms: MediaServer, aPort: number, bPort: number, o: { inC: boolean; offer?: (port: number) => string }): Promise<{ epA: Endpoint; epB: Endpoint }> {
  const offer = o.offer ?? ((port: number) => pcmuOffer(port));
  const epA = await ms.createEndpoint({ remoteSdp: offer(aPort), inbandDtmf: false });
  const epB = await ms.createEndpoint({ remoteSdp: offer(bPort), near: epA, inbandDtmf: false });
  await epA.bridge(epB);
  const want = o.inC ? 2 : 0;
  await within(async () => (await ms.stats())[0].cLegs === want, 2000);
  expect((await ms.stats())[0].cLegs, 'legs served in C').to.equal(want);
  return { epA, epB };
}
