/** A router on the URL hash: `#/calls/<id>?x=1` → { path: ['calls', '<id>'], query }. */
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  path: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const h = hash.replace(/^#\/?/, '');
  const [p = '', q = ''] = h.split('?', 2);
  return { path: p.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(q) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

export function go(path: string): void {
  location.hash = path.startsWith('#') ? path : `#${path}`;
}

export const href = (...parts: string[]) => '#/' + parts.map(encodeURIComponent).join('/');

/** A mailed link's landing (a path of its own, served as the console): which page, with its token. */
export function landingOf(pathname: string, search: string): { page: 'verify' | 'password-reset'; token: string } | null {
  const m = /\/(verify|password-reset)$/.exec(pathname);
  if (!m) return null;
  return { page: m[1] as 'verify' | 'password-reset', token: new URLSearchParams(search).get('token') ?? '' };
}
