/*
 * G.722 (ITU-T G.722, 64 kbit/s mode, 16 kHz audio in 8-bit code words: two samples per byte) through
 * libspandsp, and its packet loss concealment (spandsp's pitch-repeating PLC) on the decoded 16 kHz
 * signal. RTP framing (RFC 3551: the 8000 Hz clock) is media-engine/codecs/g722.ts's.
 */
#include "codec_common.h"
#include <stdbool.h>
#include <string.h>
#include <spandsp/telephony.h>
#include <spandsp/g722.h>
#include <spandsp/plc.h>
#include <spandsp/private/g722.h>

/* g722EncoderCreate(): an encoder for 16 kHz input at 64 kbit/s */
static napi_value enc_create(napi_env env, napi_callback_info info) {
  (void)info;
  g722_encode_state_t *e = g722_encode_init(NULL, 64000, 0);
  if (!e) return throw_codec(env, "ERR_G722", "g722EncoderCreate", "out of memory");
  napi_value h = handle_new(env, K_G722_ENC, e, NULL, 0);
  if (!h) return throw_codec(env, "ERR_G722", "g722EncoderCreate", "out of memory");
  return h;
}

/*
 * g722Encode(h, pcm: Int16Array, samples (even), out: Uint8Array): bytes written (samples / 2).
 * g722EncodeNarrow(h, pcm, samples, out): bytes written (samples). A frame whose audio is 8 kHz (a G.711
 * peer, an 8 kHz prompt): spandsp's 8 kHz mode for this call only (G.722's lower band straight from the
 * samples, the upper band sent empty), so no resampling to 16 kHz and no QMF for a band that carries
 * nothing. The upper band's adaptive state stays where the last 16 kHz frame left it.
 */
static napi_value encode(napi_env env, napi_callback_info info, const char *fn, int narrow) {
  napi_value a[4];
  int16_t *pcm;
  uint8_t *out;
  size_t pl, ol;
  int64_t n;
  if (!args(env, info, 4, a, fn)) return NULL;
  handle_t *h = handle_get(env, a[0], K_G722_ENC, fn);
  if (!h || !arg_i16(env, a[1], &pcm, &pl, fn, "pcm") || !arg_int(env, a[2], 0, (int64_t)pl, &n, fn, "samples") || !arg_u8(env, a[3], &out, &ol, fn, "out")) return NULL;
  if (!narrow && (n & 1)) return throw_range(env, fn, "samples must be even (two 16 kHz samples per code word)");
  if ((size_t)(narrow ? n : n / 2) > ol) return throw_range(env, fn, narrow ? "out is shorter than samples" : "out is shorter than samples / 2");
  g722_encode_state_t *e = h->state;
  /* back to 16 kHz frames after 8 kHz ones: the band-split filter starts empty, not from audio of before */
  if (!narrow && h->last_narrow) memset(e->x, 0, sizeof e->x), memset(e->y, 0, sizeof e->y), e->ptr = 0;
  h->last_narrow = narrow;
  e->eight_k = narrow;
  int r = g722_encode(e, out, pcm, (int)n);
  e->eight_k = 0;
  return int_value(env, r);
}

static napi_value enc_encode(napi_env env, napi_callback_info info) { return encode(env, info, "g722Encode", 0); }
static napi_value enc_encode_narrow(napi_env env, napi_callback_info info) { return encode(env, info, "g722EncodeNarrow", 1); }

/* g722DecoderCreate(): a decoder to 16 kHz with its PLC */
static napi_value dec_create(napi_env env, napi_callback_info info) {
  (void)info;
  g722_decode_state_t *d = g722_decode_init(NULL, 64000, 0);
  plc_state_t *p = plc_init(NULL);
  if (!d || !p) {
    if (d) g722_decode_free(d);
    if (p) plc_free(p);
    return throw_codec(env, "ERR_G722", "g722DecoderCreate", "out of memory");
  }
  napi_value h = handle_new(env, K_G722_DEC, d, p, 0);
  if (!h) return throw_codec(env, "ERR_G722", "g722DecoderCreate", "out of memory");
  return h;
}

/* g722Decode(h, payload: Uint8Array, offset, length, out: Int16Array): samples written (length * 2) */
static napi_value dec_decode(napi_env env, napi_callback_info info) {
  const char *fn = "g722Decode";
  napi_value a[5];
  uint8_t *pay;
  int16_t *out;
  size_t payl, ol;
  int64_t off, len;
  if (!args(env, info, 5, a, fn)) return NULL;
  handle_t *h = handle_get(env, a[0], K_G722_DEC, fn);
  if (!h || !arg_u8(env, a[1], &pay, &payl, fn, "payload") || !arg_int(env, a[2], 0, (int64_t)payl, &off, fn, "offset") ||
      !arg_int(env, a[3], 0, (int64_t)payl - off, &len, fn, "length") || !arg_i16(env, a[4], &out, &ol, fn, "out"))
    return NULL;
  if ((size_t)(len * 2) > ol) return throw_range(env, fn, "out is shorter than 2 × length");
  int n = g722_decode(h->state, out, pay + off, (int)len);
  plc_rx(h->extra, out, n); /* history for concealment; smooths the join after a concealed frame */
  return int_value(env, n);
}

/* g722Conceal(h, out: Int16Array, samples): a lost stretch of `samples` synthesised from the history */
static napi_value dec_conceal(napi_env env, napi_callback_info info) {
  const char *fn = "g722Conceal";
  napi_value a[3];
  int16_t *out;
  size_t ol;
  int64_t n;
  if (!args(env, info, 3, a, fn)) return NULL;
  handle_t *h = handle_get(env, a[0], K_G722_DEC, fn);
  if (!h || !arg_i16(env, a[1], &out, &ol, fn, "out") || !arg_int(env, a[2], 1, (int64_t)ol, &n, fn, "samples")) return NULL;
  return int_value(env, plc_fillin(h->extra, out, (int)n));
}

void codec_g722_free(handle_t *h) {
  if (h->kind == K_G722_ENC) g722_encode_free(h->state);
  else {
    g722_decode_free(h->state);
    if (h->extra) plc_free(h->extra);
  }
}

void codec_g722_init(napi_env env, napi_value exports) {
  EXPORT_FN(env, exports, "g722EncoderCreate", enc_create);
  EXPORT_FN(env, exports, "g722Encode", enc_encode);
  EXPORT_FN(env, exports, "g722EncodeNarrow", enc_encode_narrow);
  EXPORT_FN(env, exports, "g722DecoderCreate", dec_create);
  EXPORT_FN(env, exports, "g722Decode", dec_decode);
  EXPORT_FN(env, exports, "g722Conceal", dec_conceal);
}
