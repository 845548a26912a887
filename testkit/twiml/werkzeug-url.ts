/**
 * The URL a Flask app sees as `request.url` for a request line's target: werkzeug 3.1's
 * `get_current_url` (sansio/utils.py): the query string is quoted with the safe set
 * "!$&'()*+,/:;=?@%" and the result goes through `uri_to_iri`, which decodes every percent-escape
 * as UTF-8 except those of controls, space, `%`, `&`, `=`, `+` and `#` in the query (`/`, `?`, `#`
 * in the path). Twilio's Flask tutorial validates that URL with RequestValidator; the tests give it
 * to the official Node validator, which tries it as given and normalised (`new URL`).
 */

const UNRESERVED = /^[A-Za-z0-9_.\-~]$/;

/** Python's urllib.parse.quote over the string's UTF-8 bytes. */
function pyQuote(s: string, safe: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && (UNRESERVED.test(c) || safe.includes(c)) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** werkzeug's _unquote_partial: every %XX decoded as UTF-8 but those of the bytes in `keep`. */
function unquoteExcept(s: string, keep: (byte: number) => boolean): string {
  let out = '';
  let run: number[] = [];
  const flush = () => {
    if (run.length) out += Buffer.from(run).toString('utf8');
    run = [];
  };
  for (let i = 0; i < s.length; i++) {
    const m = s[i] === '%' ? /^[0-9A-Fa-f]{2}$/.exec(s.slice(i + 1, i + 3)) : null;
    if (m && !keep(parseInt(m[0], 16))) {
      run.push(parseInt(m[0], 16));
      i += 2;
      continue;
    }
    flush();
    out += s[i];
  }
  flush();
  return out;
}

const alwaysUnsafe = (b: number) => b <= 0x20 || b === 0x25 || b === 0x7f;

/** `request.url` of a Flask app at `origin` (scheme://host[:port]) for the request target `target`. */
export function werkzeugRequestUrl(origin: string, target: string): string {
  const q = target.indexOf('?');
  const rawPath = q < 0 ? target : target.slice(0, q);
  const query = q < 0 ? '' : target.slice(q + 1);
  // WSGI's PATH_INFO is the decoded path; werkzeug quotes it again
  const path = pyQuote(decodeURIComponent(rawPath).replace(/^\//, ''), "!$&'()*+,/:;=@%");
  let url = `${origin}/${unquoteExcept(path, (b) => alwaysUnsafe(b) || '/?#'.includes(String.fromCharCode(b)))}`;
  if (query) url += `?${unquoteExcept(pyQuote(query, "!$&'()*+,/:;=?@%"), (b) => alwaysUnsafe(b) || '&=+#'.includes(String.fromCharCode(b)))}`;
  return url;
}
