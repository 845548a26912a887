/**
 * A value that goes into an event-socket command as an application's argument. drachtio-fsmrf writes
 * `execute-app-arg: <value>` into a `sendmsg` frame with no escaping, so a CR or LF in it would end the
 * frame and the switch would read what follows as a command of its own (`api system …` on a real
 * FreeSWITCH); a `|` in speak's engine or voice would reshape its `engine|voice|text`. Such values are
 * refused with EslArgError, never sent. Spoken text is the one value whose line breaks mean nothing:
 * they become spaces (eslText).
 *
 * The switch expands variables in what it is given: every application's argument (switch_core_session_
 * execute_application) and saymember's text (conference_api_sub_saymember) go through
 * switch_channel_expand_variables, which runs `${api(args)}` as an API command (switch_api_execute), so
 * `${system(…)}` in a customer's <Say> would be a shell command on the switch's host. A `${` or `$${` in
 * any other argument (a file name, a URL) is refused; in spoken text the `$` gets a space after it, which
 * the expander does not open and the TTS speaks the same.
 */
export class EslArgError extends Error {
  readonly code = 'esl_arg_refused';
  constructor(
    readonly field: string,
    why: string,
  ) {
    super(`${field} cannot go to the media server: ${why}`);
    this.name = 'EslArgError';
  }
}

/** `value` as it may be sent; `pipe`: a `|` is refused too (a field of speak's `engine|voice|text`). */
export function eslArg(field: string, value: string, o: { pipe?: boolean } = {}): string {
  if (/[\r\n\0]/.test(value)) throw new EslArgError(field, 'it contains a line break or NUL, which would end the command');
  if (/\$\$?\{/.test(value)) throw new EslArgError(field, "it contains '${', which the switch would expand (and run an API command it names)");
  if (o.pipe && value.includes('|')) throw new EslArgError(field, "it contains '|', which separates speak's engine, voice and text");
  return value;
}

/** Spoken text: its line breaks as spaces, a `$` before `{` or `${` as `$ ` (no expansion can open), NUL refused. */
export function eslText(field: string, value: string): string {
  return eslArg(field, value.replace(/[\r\n]+/g, ' ').replace(/\$(?=\$?\{)/g, '$ '));
}

/**
 * The switch's reply (an api command's body) as it goes into an error message: network input, so its
 * control characters (line breaks, ESC, NUL, C1) and white space (the Unicode line and paragraph
 * separators too) become one space per run, it is trimmed, and cut to `max` characters.
 */
export function replyText(body: string, max = 200): string {
  // eslint-disable-next-line no-control-regex -- the control characters are what is matched
  const flat = body.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** The body of an api reply (drachtio-modesl's event), or '' when it has none. */
export function apiBody(res: unknown): string {
  const r = res as { getBody?: () => unknown } | null;
  return r && typeof r.getBody === 'function' ? String(r.getBody()) : '';
}
