// What a party of a TwiML call hears, told apart from the platform's own audio by switching the other
// party's tone off and on (RtpPeer's amplitude): the check of a bridge in the Dial and queue suites.
import { expect } from 'chai';
import type { RtpPeer } from '../streams/support';

/**
 * `from` is all `to` hears: with `from` silent, `to` hears quiet for `n` packets (no prompt, tone or
 * ringback of the platform's under it); with `from` talking again, `to` hears it again.
 */
export async function hearsOnly(from: RtpPeer, to: RtpPeer, n: number): Promise<void> {
  const amplitude = from.amplitude;
  from.amplitude = 0;
  try {
    const w = await to.windowAfter(false, n);
    expect(to.voiced(w), 'voiced packets heard with the other side silent').to.be.at.most(2);
  } finally {
    from.amplitude = amplitude;
  }
  await to.turned(true);
}
