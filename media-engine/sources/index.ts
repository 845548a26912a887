export { AudioSourceError, playUrlFailure, type AudioSourceErrorCode } from './errors';
export { prepareAudio, isUrl, type PrepareOptions, type PreparedAudio } from './prepare';
export { fetchToCache, type FetchOptions, type FetchResult } from './fetch-cache';
export type { CacheBounds } from './cache-index';
export { cacheTrimmed, evict, trimsStarted, TRIM_EVERY_MS } from './cache-trim';
export { openFrameReader, FileFrameReader, type FrameReaderOptions } from './file-reader';
export { convertToEngineWav, sniffAudioType } from './sox';
export { WideFileReader, openPreparedReader, isWideFormat, WIDE_RATE } from './wide-reader';
