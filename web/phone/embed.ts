/**
 * Embedding: the console (or any page of the same origin) puts the phone in an iframe
 * (`<iframe src="/phone/?embed=1" allow="microphone; autoplay">`) and talks to it with postMessage.
 *
 * Events the phone posts to its parent (`{ source: 'openvoice-phone', type, ... }`):
 *   ready                          the phone is loaded and accepts commands
 *   registration  {state, cause}   signed-out | connecting | registered | unregistered | failed
 *   call          {call}           the call state (phase, direction, peer, muted, reason, endedBy)
 *   error         {message}        a command failed
 * Commands the parent posts (`{ channel: 'openvoice-phone', command, ... }`):
 *   sign-in-agent {token?}         sign in as the agent of a login token; without one, of the page's login
 *                                  cookie (the console, whose HttpOnly cookie the phone's requests carry)
 *   sign-in-extension {ws_url?, uri, password}
 *   sign-out | dial {target} | answer | hangup | mute {muted} | hold {held} | dtmf {tones}
 * Only the page's own origin is trusted both ways (messages from elsewhere are ignored, events are
 * posted to the own origin only), so a foreign page cannot drive the phone.
 */
import type { Phone } from './phone';

export type EmbedCommand =
  | { command: 'sign-in-agent'; token?: string }
  | { command: 'sign-in-extension'; ws_url?: string; uri: string; password: string }
  | { command: 'sign-out' }
  | { command: 'dial'; target: string }
  | { command: 'answer' }
  | { command: 'hangup' }
  | { command: 'mute'; muted: boolean }
  | { command: 'hold'; held: boolean }
  | { command: 'dtmf'; tones: string };

export interface EmbedHandlers {
  signInAgentToken(token: string | null): Promise<void>;
  signInExtension(wsUrl: string | undefined, uri: string, password: string): Promise<void>;
  signOut(): Promise<void>;
}

export function startEmbedBridge(phone: Phone, handlers: EmbedHandlers): void {
  if (window.parent === window) return;
  const origin = window.location.origin;
  const post = (type: string, data: Record<string, unknown>) => window.parent.postMessage({ source: 'openvoice-phone', type, ...data }, origin);
  phone.on('registration', (r) => post('registration', { state: r.state, cause: r.cause }));
  phone.on('call', (call) => post('call', { call }));
  window.addEventListener('message', (ev: MessageEvent) => {
    if (ev.origin !== origin || ev.source !== window.parent) return;
    const msg = ev.data as ({ channel?: unknown } & EmbedCommand) | null;
    if (!msg || msg.channel !== 'openvoice-phone') return;
    run(phone, handlers, msg).catch((err: unknown) => post('error', { message: err instanceof Error ? err.message : String(err) }));
  });
  post('ready', {});
}

async function run(phone: Phone, h: EmbedHandlers, m: EmbedCommand): Promise<void> {
  switch (m.command) {
    case 'sign-in-agent':
      return h.signInAgentToken(typeof m.token === 'string' && m.token ? m.token : null);
    case 'sign-in-extension':
      return h.signInExtension(m.ws_url, m.uri, m.password);
    case 'sign-out':
      return h.signOut();
    case 'dial':
      return phone.dial(m.target);
    case 'answer':
      return phone.answer();
    case 'hangup':
      return phone.hangup();
    case 'mute':
      return phone.setMuted(m.muted);
    case 'hold':
      return phone.setHeld(m.held);
    case 'dtmf':
      return phone.sendDtmf(m.tones);
  }
}
