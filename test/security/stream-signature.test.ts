/**
 * Issue 52, finding 4: the Media Streams WebSocket handshake carried no X-Twilio-Signature (the
 * ConversationRelay one did; Twilio signs both). A sipp call runs a flow with a `<Start><Stream>`
 * (external_media_start encapsulation twilio, wait false) and a `<Connect><Stream>` (wait true), each
 * to a real `ws` server on loopback; each handshake's signature is checked with the official
 * `twilio.validateRequest` over the URL as the flow gave it (query string included), keyed by the
 * customer's AuthToken, and does not validate under another token or another URL.
 */
import { expect } from 'chai';
import twilio from 'twilio';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import type { Fixture } from '../../testkit/api';
import { until } from '../../testkit/media-app/harness';
import { useStreamStack, placeCall, type Stack } from '../../testkit/streams/support';
import { twilioApp, type TwilioApp } from '../../testkit/streams/twilio';

describe('security: Media Streams handshakes are signed (issue 52, finding 4)', function () {
  this.timeout(120_000);
  let stack: Stack;
  let owner: Fixture;
  const apps: TwilioApp[] = [];

  useStreamStack((s) => ({ stack, owner } = s));
  after(async () => {
    for (const a of apps) await a.close();
  });

  it('<Start><Stream> and <Connect><Stream> carry X-Twilio-Signature that twilio.validateRequest accepts', async () => {
    const fork = await twilioApp('/fork');
    const agent = await twilioApp('/agent');
    apps.push(fork, agent);
    const forkUrl = `${fork.url}?who=fork&n=1`;
    const agentUrl = `${agent.url}?who=agent`;
    const call = await placeCall(stack, owner.customer.id, [
      { type: 'answer' },
      { type: 'external_media_start', option: { url: forkUrl, encapsulation: 'twilio', name: 'fork', wait: false } },
      { type: 'external_media_start', option: { url: agentUrl, encapsulation: 'twilio', name: 'agent', wait: true } },
      { type: 'hangup' },
    ]);
    try {
      const started = await until(() => fork.conns[0], 10_000, 'the <Start> stream connected');
      const connected = await until(() => agent.conns[0], 10_000, 'the <Connect> stream connected');
      const token = twilioAuthToken(stack.platform.config.jwtSecret, owner.customer.id, 0);
      for (const [c, url] of [
        [started, forkUrl],
        [connected, agentUrl],
      ] as const) {
        expect(c.signature, `${url}: X-Twilio-Signature sent`).to.not.equal('');
        expect(twilio.validateRequest(token, c.signature, url, {}), `${url}: valid for the account's AuthToken`).to.equal(true);
        expect(
          twilio.validateRequest(
            token.replace(/.$/, (x) => (x === '0' ? '1' : '0')),
            c.signature,
            url,
            {},
          ),
          'another token',
        ).to.equal(false);
        expect(twilio.validateRequest(token, c.signature, `${url}&x=1`, {}), 'another URL').to.equal(false);
      }
      connected.ws.close();
    } finally {
      await call.sipp.catch(() => undefined);
      call.peer.close();
    }
  });
});
