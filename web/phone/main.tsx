/**
 * The browser phone (issue 21). Served by control-api at /phone/ (control-api/webphone), it reads
 * its settings from ./config.json, signs in as an agent or an extension, and registers over SIP
 * WebSocket with JsSIP. Page options (query string): `audio_processing=off` (no echo cancellation,
 * noise suppression or gain control), `ice=loopback` (loopback ICE candidates only: development and
 * tests on one machine), `embed=1` (compact layout inside an iframe; see embed.ts).
 * `window.openvoicePhone` is the same Phone object the UI drives, for scripts of the page's origin.
 */
import { render } from 'preact';
import { Account } from './account';
import { loadConfig } from './api';
import { startEmbedBridge } from './embed';
import { Phone } from './phone';
import { App } from './ui';

declare global {
  interface Window {
    openvoicePhone?: Phone;
  }
}

async function boot(): Promise<void> {
  const q = new URLSearchParams(window.location.search);
  const audio = document.getElementById('remote-audio') as HTMLAudioElement;
  const phone = new Phone({ audioProcessing: q.get('audio_processing') !== 'off', loopbackOnly: q.get('ice') === 'loopback', audio });
  const config = await loadConfig();
  const account = new Account(phone, config);
  if (q.get('embed') === '1') document.body.classList.add('embedded');
  window.openvoicePhone = phone;
  startEmbedBridge(phone, {
    signInAgentToken: (token) => account.signInAgentToken(token),
    signInExtension: async (ws, uri, pw) => account.signInExtension(ws, uri, pw),
    signOut: () => account.signOut(),
  });
  window.addEventListener('beforeunload', () => phone.stop());
  render(<App phone={phone} account={account} needWsUrl={!config.ws_url} />, document.getElementById('app')!);
}

boot().catch((err: unknown) => {
  const el = document.getElementById('app');
  if (el) el.textContent = `The phone could not start: ${err instanceof Error ? err.message : String(err)}`;
});
