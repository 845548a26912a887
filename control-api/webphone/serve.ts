/**
 * Serves the browser phone (web/phone, built into dist/web/phone by scripts/build-web.ts) at /phone/,
 * and tells it where SIP over WebSocket is: GET /phone/config.json → {ws_url, sip_domain}
 * (SIP_WSS_PUBLIC_URL, SIP_DOMAIN). Every answer carries a strict Content-Security-Policy: scripts,
 * styles and fetches from this origin only, WebSocket connections to SIP_WSS_PUBLIC_URL's origin only
 * (any wss: URL when it is not set, since the user then types one), framing by this origin only (the
 * console embeds the phone). Files are revalidated on every load (`no-cache`; their names carry no
 * content hash), the config is never cached.
 */
import fs from 'node:fs';
import path from 'node:path';
import express, { Router, type Response } from 'express';
import type { AppContext } from '../context';

export const PHONE_DIST = path.resolve(__dirname, '..', '..', 'dist', 'web', 'phone');

/** The Content-Security-Policy of the phone's pages for a given SIP WebSocket URL (null: not set). */
export function phoneCsp(wsUrl: string | null): string {
  const ws = wsUrl ? new URL(wsUrl).origin.replace(/^http/, 'ws') : 'wss:';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "media-src 'self' blob: mediastream:",
    `connect-src 'self' ${ws}`,
    "frame-ancestors 'self'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

export function webphoneRouter(ctx: AppContext, opts: { dir?: string } = {}): Router {
  const dir = opts.dir ?? PHONE_DIST;
  const wsUrl = ctx.config.sipWssPublicUrl;
  const csp = phoneCsp(wsUrl);
  const secure = (res: Response) => {
    res.set('Content-Security-Policy', csp);
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Referrer-Policy', 'no-referrer');
    res.set('X-Frame-Options', 'SAMEORIGIN');
    res.set('Cross-Origin-Opener-Policy', 'same-origin');
    res.set('Permissions-Policy', 'microphone=(self), camera=(), geolocation=()');
  };
  const r = Router({ strict: true });
  r.use((req, res, next) => {
    secure(res);
    // /phone → /phone/ so the page's relative URLs (main.js, config.json) resolve under /phone/
    if (req.path === '/' && !req.originalUrl.split('?')[0]!.endsWith('/')) return res.redirect(301, `${req.baseUrl}/`);
    next();
  });
  r.get('/config.json', (_req, res) => {
    res.set('Cache-Control', 'no-store');
    res.json({ ws_url: wsUrl, sip_domain: ctx.config.sipDomain });
  });
  r.use((req, res, next) => {
    if (fs.existsSync(path.join(dir, 'index.html'))) return next();
    res.status(503).type('text/plain').send('The browser phone is not built: run `npx tsx scripts/build-web.ts phone`.\n');
  });
  r.use(
    express.static(dir, {
      index: 'index.html',
      redirect: true,
      dotfiles: 'ignore',
      fallthrough: true,
      setHeaders: (res) => res.setHeader('Cache-Control', 'no-cache'),
    }),
  );
  r.use((_req, res) => {
    res.status(404).type('text/plain').send('Not found\n');
  });
  return r;
}
