/**
 * Who the phone is signed in as: an agent (login token → short-lived SIP credential for the agent's
 * extension, revoked on sign-out) or an extension (its own SIP address and password).
 */
import { agentLogin, agentSignOut, agentSipCredentials, type PhoneConfig } from './api';
import type { Phone } from './phone';

export class Account {
  /** Signed in as an agent: its login token, or null for the page's login cookie (embedded in the console). */
  private agent: { token: string | null } | null = null;
  /** Shown in the header: the agent's username or the extension's address. */
  who = '';

  constructor(
    private readonly phone: Phone,
    private readonly config: PhoneConfig,
  ) {}

  wsUrl(typed?: string): string {
    const url = (typed ?? '').trim() || this.config.ws_url || '';
    if (!/^wss?:\/\//i.test(url)) throw new Error('type the SIP WebSocket URL (wss://…)');
    return url;
  }

  async signInAgent(username: string, password: string, typedWsUrl?: string): Promise<void> {
    const token = await agentLogin(username, password);
    await this.signInAgentToken(token, typedWsUrl);
    this.who = `${username} · ${this.who}`;
  }

  async signInAgentToken(token: string | null, typedWsUrl?: string): Promise<void> {
    const fallback = (typedWsUrl ?? '').trim() || this.config.ws_url || '';
    const creds = await agentSipCredentials(token, fallback);
    this.agent = { token };
    this.who = creds.uri.replace(/^sip:/, '');
    this.phone.start(creds);
  }

  signInExtension(typedWsUrl: string | undefined, uri: string, password: string): void {
    const u = uri.trim();
    const full = /^sips?:/i.test(u) ? u : `sip:${u.includes('@') ? u : `${u}@${this.config.sip_domain}`}`;
    this.phone.start({ wsUrl: this.wsUrl(typedWsUrl), uri: full, password });
    this.who = full.replace(/^sip:/, '');
  }

  async signOut(): Promise<void> {
    this.phone.stop();
    if (this.agent) await agentSignOut(this.agent.token);
    this.agent = null;
    this.who = '';
  }
}
