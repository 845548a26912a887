/**
 * Review: docs/security.md says a URL carrying user:password@ is refused on every egress path, but
 * external_media_start's ws:// and wss:// URLs were accepted with them (sent on as Basic auth).
 * Pure check of the action's options: no connection.
 */
import { expect } from 'chai';
import { externalMediaProblem } from '../../core/streams/external-media-options';

describe('security review: external media URLs carry no user name or password', () => {
  it('ws://user:pass@host and wss://user@host are refused, a plain wss URL is not', () => {
    expect(externalMediaProblem('ws://user:pass@bot.example.test/media', 'rtp')).to.match(/user name or password/);
    expect(externalMediaProblem('wss://user@bot.example.test/media', 'rtp')).to.match(/user name or password/);
    expect(externalMediaProblem('wss://bot.example.test/media', 'rtp')).to.equal(null);
  });
});
