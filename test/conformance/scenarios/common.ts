import type { Known, State, Step } from '../steps';

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

/** The caller of the live-call scenarios: a telephone number the test trunk presents. */
export const CALLER = { type: 'tel', target: '+899100000002' };

/** POST /calls to a fresh sipp party whose flow runs `actions(s)`; the call's id kept under `k`. */
export const dialParty = (k: string, actions: (s: State) => unknown[]): Step => ({
  op: 'post /calls',
  again: true,
  prepare: async (s, live) => {
    s[`${k}Party`] = await live.party(k);
  },
  body: (s) => ({ source: CALLER, destinations: [{ type: 'sip', target: s[`${k}Party`] }], actions: actions(s) }),
  save: (s, b) => {
    s[k] = String((b.calls as { id: string }[])[0]!.id);
  },
});
