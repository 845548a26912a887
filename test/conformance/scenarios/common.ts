import type { Known } from '../steps';

/** Values shared by the scenario files. */
export const EMPTY = '00000000-0000-0000-0000-000000000000';
export const tel = (target: string) => ({ type: 'tel', target, target_name: '', name: '', detail: '' });
export const ANSWER = [{ type: 'answer' }];

/** Lists the reference documents as a bare array. */
export const PAGINATED: Known = {
  reason: 'spec governs: "List endpoints are paginated [...] The response is an object with `result` (array) and `next_page_token` (string)"; the reference documents a bare array',
  shows: /^body does not match the reference schema: \/ must be array \S+$/,
};

/** GET .../file of a stored file. */
export const DOWNLOAD_200: Known = {
  reason:
    "a download with credentials streams the file (200) where the reference answers 307 to a signed URL: it works without STORAGE_SIGNING_KEY, and the signed URL is in the record's uri_download",
  shows: /^status 200, the reference documents 307/,
};
