/**
 * The web console (web/console/, built into dist/web/console/ by scripts/build-web.ts), served at
 * /console. Static files only: the console talks to the platform through the public REST API and
 * /v1.0/ws like any other client. Every answer carries a strict Content-Security-Policy (scripts,
 * styles, sockets and media from this origin only, no framing) and cache headers: index.html is
 * revalidated every time, the other files after five minutes.
 *
 * The one non-static route, POST /console/sign-out, ends the session of the `token` cookie on the
 * server (`signOut`, as POST /auth/logout) and expires the HttpOnly cookie that POST /auth/login set
 * (page script cannot clear an HttpOnly cookie). A missing, expired or already ended session is
 * nothing to end: 204 all the same. It grants nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import express, { Router, type Request, type Response } from 'express';
import { expireTokenCookie } from '../auth/logout';

export const CONSOLE_DIST = path.resolve(__dirname, '..', '..', 'dist', 'web', 'console');

/** The console's Content-Security-Policy. `extraMediaOrigin`: where recording downloads come from (PUBLIC_URL). */
export function consoleCsp(extraMediaOrigin = ''): string {
  const media = ["'self'", 'blob:', extraMediaOrigin].filter(Boolean).join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    `media-src ${media}`,
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

export interface ConsoleRouterOptions {
  publicUrl: string;
  /** Ends the session of the request's token; resolves when there is none to end. */
  signOut: (req: Request) => Promise<void>;
  dist?: string;
}

export function createConsoleRouter(opts: ConsoleRouterOptions): Router {
  const dist = opts.dist ?? CONSOLE_DIST;
  const csp = consoleCsp(originOf(opts.publicUrl));
  const r = Router();
  const headers = (res: Response) => {
    res.set('Content-Security-Policy', csp);
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Referrer-Policy', 'no-referrer');
    res.set('X-Frame-Options', 'DENY');
  };
  const page = (cache: string) => (_req: express.Request, res: Response) => {
    headers(res);
    const file = path.join(dist, 'index.html');
    if (!fs.existsSync(file)) {
      res.status(503).type('text/plain').send('The console is not built: run `npx tsx scripts/build-web.ts console`.\n');
      return;
    }
    res.set('Cache-Control', cache);
    res.sendFile(file);
  };

  r.post('/sign-out', async (req, res) => {
    headers(res);
    res.set('Cache-Control', 'no-store');
    expireTokenCookie(res); // also when ending the session fails (the error's envelope follows)
    await opts.signOut(req);
    res.status(204).end();
  });
  const index = page('no-cache');
  r.get('/', index);
  r.get('/index.html', index);
  // the account mails' links (core/smtp/templates.ts): the console, the token in its query string
  r.get(['/verify', '/password-reset'], page('no-store'));
  r.use(
    express.static(dist, {
      index: false,
      fallthrough: true,
      redirect: false,
      setHeaders: (res) => {
        headers(res);
        res.setHeader('Cache-Control', 'public, max-age=300');
      },
    }),
  );
  return r;
}
