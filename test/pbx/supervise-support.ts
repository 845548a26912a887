// What the supervisor tests measure: the energy a phone received at one frequency, in blocks of
// 1600 samples (200 ms: 5 Hz wide Goertzel bins, so the codec's noise floor per bin sits far below
// a tone), over a window of the last frames it heard.
import request from 'supertest';
import { goertzelCoeff, goertzelPower } from '../../media-engine/dsp/goertzel';
import type { RtpParty } from '../../testkit/conference/party';
import type { Stack } from '../xfer/support';

const BLOCK = 1600;

/** Mean Goertzel power at `freq` per 1600-sample block of what `party` heard in the last `windowMs`. */
export function powerAt(party: RtpParty, freq: number, windowMs = 2000): number {
  const since = Date.now() - windowMs;
  const frames = party.heard.filter((h) => h.at >= since);
  const pcm = new Int16Array(frames.length * 160);
  frames.forEach((h, i) => pcm.set(h.pcm, i * 160));
  const coeff = goertzelCoeff(freq);
  let sum = 0;
  let n = 0;
  for (let start = 0; start + BLOCK <= pcm.length; start += BLOCK, n++) sum += goertzelPower(pcm, start, BLOCK, coeff);
  return n ? sum / n : 0;
}

/** 10·log10(a / b), b floored at 1 (a block of digital silence). */
export const dbAbove = (a: number, b: number) => 10 * Math.log10(a / Math.max(b, 1));

/** The API with any verb and token (the stack's helper has post and get with the admin's). */
export function api(s: Stack, token = s.f.token) {
  const auth = `Bearer ${token}`;
  return {
    post: (path: string, body: object) => request(s.t.app).post(`/v1.0${path}`).set('Authorization', auth).send(body),
    put: (path: string, body: object) => request(s.t.app).put(`/v1.0${path}`).set('Authorization', auth).send(body),
    get: (path: string) => request(s.t.app).get(`/v1.0${path}`).set('Authorization', auth),
    delete: (path: string) => request(s.t.app).delete(`/v1.0${path}`).set('Authorization', auth),
  };
}
