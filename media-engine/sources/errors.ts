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
