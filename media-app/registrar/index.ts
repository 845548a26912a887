/**
 * The registrar (srf.register): digest authentication against the extensions (MD5 and SHA-256
 * challenges, RFC 8760, in the extension's order or the platform default), bindings in Redis,
 * un-REGISTER, and a lockout per address-of-record.
 * Unknown extension, unknown domain and wrong password are answered identically (403 after a
 * challenge), so the registrar never tells whether an extension exists. Each nonce count is
 * accepted once across all nodes (nonce-use.ts): a replayed answer, a nonce past its lifetime and
 * a nonce issued to another address are challenged again (stale=true for the first two) and count
 * as nothing. Wrong answers to a nonce of ours lock the source address out of that AOR (lockout.ts:
 * keyed on address and AOR, sparing devices that authenticated, with a per-AOR ceiling that spares
 * addresses that authenticated before); a locked request (AOR known or not) gets 403 with
 * Retry-After: the seconds its lock has left. An extension with its own digest_algorithms is
 * challenged in that order and an answer in another algorithm is refused; such an override is visible
 * in the challenge (the one thing that tells an extension with an override from an unknown one).
 * A frozen, expired or deleted account's phone that authenticates gets 403 with a Warning and loses
 * its bindings; it may still un-REGISTER (standing.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Db } from '../../core/db/knex';
import { extensionsRepo, type ExtensionRow } from '../../core/repos/extensions';
import { isWebSipUsername, usableWebSipCredential, WebSipCredentials } from '../../core/workspace/web-sip-credentials';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { BindingStore, type Binding } from './bindings';
import { challenges, NonceSealer, nonceCount, type DigestAlgorithm, parseCredentials, verifyResponse } from '../kit/sip-digest';
import { Lockout, type LockoutPolicy, type Source } from './lockout';
import { NonceUse } from './nonce-use';
import { closedAccount, refuseClosedAccount } from './standing';
import { parseSipUri } from '../kit/sip-uri';
import { FLOW_CLOSED_HEADER, isWebSocketTransport } from '../../core/registrar/bindings';
import { edgeOf } from '../kit/edge';

export interface RegistrarOptions {
  db: Db;
  redis: Redis;
  keyPrefix: string;
  logger: Logger;
  /** Challenge order, most preferred first (the default; an extension's digest_algorithms overrides it). */
  algorithms: readonly DigestAlgorithm[];
  minExpires: number;
  maxExpires: number;
  lockout: LockoutPolicy;
}

/** The nonce secret every node shares (created once in Redis). */
export async function sharedSecret(redis: Redis, prefix: string, name: string): Promise<string> {
  const key = `${prefix}secret:${name}`;
  await redis.set(key, randomBytes(32).toString('base64url'), 'NX');
  return (await redis.get(key))!;
}

/** A password no extension has: wrong answers for unknown users cost the same hashing work. */
const DECOY = randomBytes(24).toString('base64url');

export class Registrar {
  readonly bindings: BindingStore;
  readonly lockout: Lockout;
  private readonly extensions;
  private readonly webCredentials: WebSipCredentials;
  private readonly used: NonceUse;
  private readonly bindingWatchers = new Set<(ext: ExtensionRow) => void>();

  constructor(
    private readonly opts: RegistrarOptions,
    private readonly nonces: NonceSealer,
  ) {
    this.bindings = new BindingStore(opts.redis, opts.keyPrefix);
    this.used = new NonceUse(opts.redis, opts.keyPrefix);
    this.lockout = new Lockout(opts.redis, opts.keyPrefix, opts.lockout);
    this.extensions = extensionsRepo(opts.db);
    this.webCredentials = new WebSipCredentials(opts.redis, opts.keyPrefix);
  }

  static async create(opts: RegistrarOptions): Promise<Registrar> {
    return new Registrar(opts, new NonceSealer(await sharedSecret(opts.redis, opts.keyPrefix, 'digest-nonce')));
  }

  /** Sends the 401 with one challenge per algorithm (two header lines: SIP forbids a comma list here), its nonce for `source`. */
  challenge(res: SrfResponse, realm: string, source: string, stale = false, header = 'WWW-Authenticate', status = 401, order: readonly DigestAlgorithm[] = this.opts.algorithms): void {
    const values = challenges(realm, this.nonces.issue(realm, source), { stale, order });
    // drachtio-srf writes a string header value verbatim on one line; CRLF starts the next one.
    res.send(status, { headers: { [header]: values.join(`\r\n${header}: `) } });
  }

  /**
   * Authenticates a request for `user@domain` (REGISTER, or an INVITE from an extension). Answers
   * the request itself when it fails (401/407 challenge, 403) and resolves null; else the extension.
   */
  async authenticate(req: SrfRequest, res: SrfResponse, user: string, domain: string, kind: 'www' | 'proxy' = 'www'): Promise<ExtensionRow | null> {
    const lookup = () => this.extensions.getByAor(user, domain.toLowerCase());
    // An agent's short-lived browser credential (core/workspace/web-sip-credentials.ts): its own
    // digest username and password, accepted for the extension it is bound to, alongside the
    // extension's own password.
    const webUser = parseCredentials(req.get(kind === 'www' ? 'Authorization' : 'Proxy-Authorization') ?? '')?.username;
    if (webUser && isWebSipUsername(webUser)) {
      const found = await this.authenticateWith(
        req,
        res,
        user,
        domain,
        kind,
        async () => {
          const ext = await lookup();
          const cred = ext ? await usableWebSipCredential(this.opts.db, this.webCredentials, webUser, ext) : null;
          return ext && cred ? { ext, password: cred.password } : null;
        },
        () => webUser,
        (r) => r.ext.digest_algorithms,
      );
      return found?.ext ?? null;
    }
    return this.authenticateWith(req, res, user, domain, kind, lookup, undefined, (e) => e.digest_algorithms);
  }

  /** The same digest exchange and lockout over any credential lookup (trunks use it too). */
  async authenticateWith<T extends { password: string }>(
    req: SrfRequest,
    res: SrfResponse,
    user: string,
    realm: string,
    kind: 'www' | 'proxy',
    lookup: () => Promise<T | null>,
    expectedUser: (row: T) => string = () => user,
    algorithmsOf: (row: T) => readonly DigestAlgorithm[] | null = () => null,
  ): Promise<T | null> {
    const aor = `${user}@${realm}`.toLowerCase();
    const challengeHeader = kind === 'www' ? 'WWW-Authenticate' : 'Proxy-Authenticate';
    const status = kind === 'www' ? 401 : 407;
    // Locked (this source for this AOR, or the AOR's ceiling for a source it does not trust): refused
    // whatever the credentials, with the time left (RFC 3261 20.33). The same for an AOR that does
    // not exist, which locks the same way.
    const source: Source = { address: req.source_address, port: Number(req.source_port), protocol: String(req.protocol ?? '') };
    const lockedFor = await this.lockout.lockedFor(aor, source);
    if (lockedFor > 0) {
      res.send(403, { headers: { 'Retry-After': String(lockedFor) } });
      return null;
    }
    const row = await lookup();
    const own = row ? algorithmsOf(row) : null;
    const order = own?.length ? own : this.opts.algorithms;
    const again = (stale: boolean): null => {
      this.challenge(res, realm, source.address, stale, challengeHeader, status, order);
      return null;
    };
    const raw = req.get(kind === 'www' ? 'Authorization' : 'Proxy-Authorization');
    if (!raw) return again(false);
    const creds = parseCredentials(raw);
    if (!creds) {
      // not an answer to any challenge of ours (another scheme, a malformed header): nothing to count
      res.send(403);
      return null;
    }
    // Only an answer to a nonce issued to this address is a guess worth counting: a made-up or
    // forged nonce, one for another realm or issued to another address gets a fresh challenge.
    const nonce = this.nonces.check(creds.nonce, realm, source.address);
    if (nonce.state === 'invalid') return again(false);
    if (nonce.state === 'stale') return again(true);
    const nc = nonceCount(creds);
    const ok =
      nc !== null &&
      order.includes(creds.algorithm) &&
      verifyResponse(creds, req.method, row ? row.password : DECOY) &&
      row !== null &&
      creds.username === expectedUser(row) &&
      creds.realm.toLowerCase() === realm.toLowerCase();
    if (!ok) {
      const locked = await this.lockout.fail(aor, source);
      if (locked) {
        this.opts.logger.warn({ aor, source: source.address }, 'address locked out of an address-of-record');
        res.send(403, { headers: { 'Retry-After': String(locked) } });
      } else res.send(403);
      return null;
    }
    // Right answer: accepted once per nonce count on any node; a replay gets a new nonce (stale:
    // the answer was right, its nonce is used up) and counts as nothing.
    if (!(await this.used.claim(creds.nonce, nc, nonce.ttlMs))) return again(true);
    await this.lockout.succeed(aor, source);
    return row;
  }

  /** Calls `fn` after each REGISTER that changed or removed an extension's bindings (presence); returns the way to stop. */
  onBindingsChanged(fn: (ext: ExtensionRow) => void): () => void {
    this.bindingWatchers.add(fn);
    return () => this.bindingWatchers.delete(fn);
  }

  private bindingsChanged(ext: ExtensionRow): void {
    for (const fn of this.bindingWatchers) fn(ext);
  }

  /** srf.register middleware. */
  handle = (req: SrfRequest, res: SrfResponse): void => {
    this.register(req, res).catch((err: Error) => {
      this.opts.logger.error({ err: err.message }, 'REGISTER failed');
      if (!res.finalResponseSent) res.send(500);
    });
  };

  private async register(req: SrfRequest, res: SrfResponse): Promise<void> {
    const to = parseSipUri(headerUri(req.get('To')));
    if (!to || !to.user) return void res.send(400);
    const protocol = String(req.protocol ?? '').toLowerCase();
    if (req.has(FLOW_CLOSED_HEADER) && isWebSocketTransport(protocol)) {
      // sip-server: this WebSocket connection ended. Only bindings made over it go, so the notice
      // needs no credentials (a peer could only ever name its own connection).
      const aor = `${to.user}@${to.host}`.toLowerCase();
      const n = await this.bindings.removeFlow(aor, { address: req.source_address, port: Number(req.source_port), protocol });
      this.opts.logger.debug({ aor, removed: n }, 'WebSocket flow closed: its bindings removed');
      return void res.send(200);
    }
    const ext = await this.authenticate(req, res, to.user, to.host);
    if (!ext) return;
    const aor = `${to.user}@${to.host}`.toLowerCase();

    const contactHeader = (req.get('Contact') ?? '').trim();
    const headerExpires = req.has('Expires') ? Number(req.get('Expires')) : undefined;
    const callId = req.get('Call-ID') ?? '';
    const cseq = Number((req.get('CSeq') ?? '0').split(/\s+/)[0]);
    if (contactHeader === '*') {
      if (headerExpires !== 0) return void res.send(400);
      await this.bindings.removeAll(aor);
      res.send(200);
      return this.bindingsChanged(ext);
    }
    // RFC 3327: honoured from a trusted edge only (a Path from anyone else would let a phone pick
    // the host the platform sends its calls to)
    const path =
      edgeOf(req) && req.has('Path')
        ? splitContacts(req.get('Path') ?? '')
            .map(headerUri)
            .filter(Boolean)
        : [];
    const changes: { binding: Binding; expires: number }[] = [];
    for (const c of contactHeader ? splitContacts(contactHeader) : []) {
      const uri = headerUri(c);
      const param = /;\s*expires\s*=\s*(\d+)/i.exec(c.replace(/<[^>]*>/, ''));
      let expires = param ? Number(param[1]) : (headerExpires ?? this.opts.maxExpires);
      if (!Number.isFinite(expires) || expires < 0) return void res.send(400);
      if (expires > 0 && expires < this.opts.minExpires) {
        return void res.send(423, { headers: { 'Min-Expires': String(this.opts.minExpires) } });
      }
      expires = Math.min(expires, this.opts.maxExpires);
      changes.push({
        expires,
        binding: {
          contact: uri,
          expiresAt: 0,
          callId,
          cseq,
          source: { address: req.source_address, port: Number(req.source_port), protocol },
          userAgent: req.get('User-Agent') ?? '',
          ...(path.length ? { path } : {}),
        },
      });
    }
    // A closed account (standing.ts) may remove its bindings, nothing else: a REGISTER that adds or
    // refreshes one (or only asks for them) gets 403 and the AOR's bindings go.
    if (changes.length === 0 || changes.some((c) => c.expires > 0)) {
      const closed = await closedAccount(this.opts.db, ext.customer_id);
      if (closed) {
        await this.bindings.removeAll(aor);
        this.opts.logger.info({ aor, account: closed }, 'REGISTER refused: account closed');
        refuseClosedAccount(res, closed);
        return this.bindingsChanged(ext);
      }
    }
    const now = Date.now();
    const bound = changes.length ? await this.bindings.update(aor, changes) : await this.bindings.get(aor);
    const contacts = bound.map((b) => `<${b.contact}>;expires=${Math.max(0, Math.round((b.expiresAt - now) / 1000))}`);
    this.opts.logger.debug({ aor, contacts: contacts.length }, 'registered');
    const headers: Record<string, string> = {};
    if (contacts.length) headers.Contact = contacts.join(', ');
    if (path.length) headers.Path = path.map((p) => `<${p}>`).join(', ');
    res.send(200, { headers });
    if (changes.length) this.bindingsChanged(ext);
  }
}

/** The URI of a name-addr (`"x" <sip:a@b>;tag=1`) or addr-spec header value. */
export function headerUri(v: string | undefined): string {
  if (!v) return '';
  const m = /<([^>]*)>/.exec(v);
  return (m ? m[1]! : v.split(';')[0]!).trim();
}

/** Contact values separated by commas outside quotes and angle brackets. */
function splitContacts(v: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let cur = '';
  for (const ch of v) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '<') depth++;
    else if (!quoted && ch === '>') depth--;
    if (ch === ',' && !quoted && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}
