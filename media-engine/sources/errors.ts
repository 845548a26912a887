/** Why an audio source could not be prepared; `code` is stable for callers to branch on. */
export type AudioSourceErrorCode =
  | 'NOT_FOUND' // local file missing
  | 'BAD_URL' // not a path or an http(s) URL
  | 'REFUSED' // the egress policy does not allow the URL's host
  | 'FETCH_FAILED' // network error (refused, DNS, reset)
  | 'TIMEOUT' // fetch or conversion took too long
  | 'HTTP_STATUS' // server answered with an error status
  | 'TOO_LARGE' // over maxBytes
  | 'UNSUPPORTED_FORMAT' // not audio we know how to convert
  | 'CONVERSION_FAILED'; // sox could not read or convert it

export class AudioSourceError extends Error {
  constructor(
    readonly code: AudioSourceErrorCode,
    message: string,
    readonly source?: string,
  ) {
    super(message);
    this.name = 'AudioSourceError';
  }
}

/**
 * What a caller is told when a play URL could not be played (the engine's play, the fsmrf backend's
 * shared prompts): the policy's refusal, or one generic reason (never the remote answer). Any other
 * error is returned as it is.
 */
export function playUrlFailure(e: unknown, url: string): unknown {
  if (!(e instanceof AudioSourceError)) return e;
  const message = e.code === 'REFUSED' ? `${url}: ${e.message}` : `${url}: the audio URL could not be fetched or played`;
  return Object.assign(new Error(message), { code: e.code });
}
