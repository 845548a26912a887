/*
 * Opus (RFC 6716 through libopus, RTP framing of RFC 7587 in media-engine/codecs/opus.ts): one mono
 * encoder at 16 or 48 kHz, one decoder at 8, 16 or 48 kHz (a decoder reads any packet whatever rate it
 * was encoded at). Decode covers the three cases of a receive path: a packet, a lost packet concealed
 * (PLC: no payload), and a lost packet rebuilt from the in-band FEC data of the packet after it.
 */
#include "codec_common.h"
#include <opus.h>
#include <stdio.h>

static int valid_rate(int64_t r, int enc) { return r == 8000 || r == 16000 || r == 48000 || (!enc && (r == 12000 || r == 24000)); }

/* a legal Opus frame at `rate`: 2.5, 5, 10, 20, 40 or 60 ms */
static int valid_frame(int64_t n, int64_t rate) {
  int64_t per_ms = rate / 1000;
  return n * 2 == per_ms * 5 || n == per_ms * 5 || n == per_ms * 10 || n == per_ms * 20 || n == per_ms * 40 || n == per_ms * 60;
}

static napi_value opus_fail(napi_env env, const char *fn, int err) {
  const char *code = err == OPUS_INVALID_PACKET ? "ERR_OPUS_INVALID_PACKET" : err == OPUS_BUFFER_TOO_SMALL ? "ERR_OPUS_BUFFER_TOO_SMALL" : "ERR_OPUS";
  return throw_codec(env, code, fn, opus_strerror(err));
}

/* the widest audio band a peer's maxplaybackrate (Hz) asks for (RFC 7587 section 6.1) */
static opus_int32 band_for(int64_t playback) {
  return playback <= 8000 ? OPUS_BANDWIDTH_NARROWBAND : playback <= 12000 ? OPUS_BANDWIDTH_MEDIUMBAND : playback <= 16000 ? OPUS_BANDWIDTH_WIDEBAND
       : playback <= 24000 ? OPUS_BANDWIDTH_SUPERWIDEBAND : OPUS_BANDWIDTH_FULLBAND;
}

/*
 * opusEncoderCreate(sampleRate 16000|48000, complexity 0-10, bitrate 6000-510000, fec 0|1, lossPercent 0-100,
 * dtx 0|1, maxPlaybackRate 8000-48000)
 */
static napi_value enc_create(napi_env env, napi_callback_info info) {
  const char *fn = "opusEncoderCreate";
  napi_value a[7];
  int64_t rate, cx, br, fec, loss, dtx, playback;
  if (!args(env, info, 7, a, fn)) return NULL;
  if (!arg_int(env, a[0], 8000, 48000, &rate, fn, "sampleRate")) return NULL;
  if (!valid_rate(rate, 1)) return throw_range(env, fn, "sampleRate must be 8000, 16000 or 48000");
  if (!arg_int(env, a[1], 0, 10, &cx, fn, "complexity") || !arg_int(env, a[2], 6000, 510000, &br, fn, "bitrate") ||
      !arg_int(env, a[3], 0, 1, &fec, fn, "fec") || !arg_int(env, a[4], 0, 100, &loss, fn, "lossPercent") || !arg_int(env, a[5], 0, 1, &dtx, fn, "dtx") ||
      !arg_int(env, a[6], 8000, 48000, &playback, fn, "maxPlaybackRate"))
    return NULL;
  int err = 0;
  OpusEncoder *e = opus_encoder_create((opus_int32)rate, 1, OPUS_APPLICATION_VOIP, &err);
  if (!e) return opus_fail(env, fn, err);
  if (opus_encoder_ctl(e, OPUS_SET_COMPLEXITY((opus_int32)cx)) != OPUS_OK || opus_encoder_ctl(e, OPUS_SET_BITRATE((opus_int32)br)) != OPUS_OK ||
      opus_encoder_ctl(e, OPUS_SET_INBAND_FEC((opus_int32)fec)) != OPUS_OK || opus_encoder_ctl(e, OPUS_SET_PACKET_LOSS_PERC((opus_int32)loss)) != OPUS_OK ||
      opus_encoder_ctl(e, OPUS_SET_DTX((opus_int32)dtx)) != OPUS_OK || opus_encoder_ctl(e, OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE)) != OPUS_OK ||
      opus_encoder_ctl(e, OPUS_SET_MAX_BANDWIDTH(band_for(playback))) != OPUS_OK) {
    opus_encoder_destroy(e);
    return throw_codec(env, "ERR_OPUS", fn, "the encoder refused a setting");
  }
  napi_value h = handle_new(env, K_OPUS_ENC, e, NULL, opus_encoder_get_size(1));
  if (!h) return throw_codec(env, "ERR_OPUS", fn, "out of memory");
  return h;
}

/* opusEncode(h, pcm: Int16Array, frameSamples, out: Uint8Array): bytes written (1-2: a DTX frame) */
static napi_value enc_encode(napi_env env, napi_callback_info info) {
  const char *fn = "opusEncode";
  napi_value a[4];
  int16_t *pcm;
  uint8_t *out;
  size_t pl, ol;
  int64_t n;
  if (!args(env, info, 4, a, fn)) return NULL;
  handle_t *h = handle_get(env, a[0], K_OPUS_ENC, fn);
  if (!h || !arg_i16(env, a[1], &pcm, &pl, fn, "pcm") || !arg_int(env, a[2], 1, 5760, &n, fn, "frameSamples") || !arg_u8(env, a[3], &out, &ol, fn, "out")) return NULL;
  opus_int32 rate = 0;
  opus_encoder_ctl((OpusEncoder *)h->state, OPUS_GET_SAMPLE_RATE(&rate));
  if (!valid_frame(n, rate)) return throw_range(env, fn, "frameSamples is not an Opus frame size (2.5-60 ms) at the encoder's rate");
  if ((size_t)n > pl) return throw_range(env, fn, "pcm is shorter than frameSamples");
  if (ol < 3) return throw_range(env, fn, "out must hold at least 3 bytes");
  opus_int32 cap = ol > 1275 ? 1275 : (opus_int32)ol;
  int r = opus_encode((OpusEncoder *)h->state, pcm, (int)n, out, cap);
  if (r < 0) return opus_fail(env, fn, r);
  return int_value(env, r);
}

/*
 * opusEncoderNarrow(h, on 0|1): 1 while the frames carry 8 kHz audio (a G.711 peer, an 8 kHz prompt):
 * the encoder codes narrow band (SILK at 8 kHz, about half the work of wide band); 0 gives the band back
 * to the encoder's own choice under the maxplaybackrate it was made with.
 */
static napi_value enc_narrow(napi_env env, napi_callback_info info) {
  const char *fn = "opusEncoderNarrow";
  napi_value a[2];
  int64_t on;
  if (!args(env, info, 2, a, fn)) return NULL;
  handle_t *h = handle_get(env, a[0], K_OPUS_ENC, fn);
  if (!h || !arg_int(env, a[1], 0, 1, &on, fn, "on")) return NULL;
  int r = opus_encoder_ctl((OpusEncoder *)h->state, OPUS_SET_BANDWIDTH(on ? OPUS_BANDWIDTH_NARROWBAND : OPUS_AUTO));
  if (r != OPUS_OK) return opus_fail(env, fn, r);
  return NULL;
}

/* opusEncoderReset(h): the encoder starts afresh (OPUS_RESET_STATE: no history of audio long gone) */
static napi_value enc_reset(napi_env env, napi_callback_info info) {
  const char *fn = "opusEncoderReset";
  napi_value a[1];
  if (!args(env, info, 1, a, fn)) return NULL;
  handle_t *h = handle_get(env, a[0], K_OPUS_ENC, fn);
  if (!h) return NULL;
  int r = opus_encoder_ctl((OpusEncoder *)h->state, OPUS_RESET_STATE);
  if (r != OPUS_OK) return opus_fail(env, fn, r);
  return NULL;
}

/* opusDecoderCreate(sampleRate 8000|12000|16000|24000|48000) */
static napi_value dec_create(napi_env env, napi_callback_info info) {
  const char *fn = "opusDecoderCreate";
  napi_value a[1];
  int64_t rate;
  if (!args(env, info, 1, a, fn) || !arg_int(env, a[0], 8000, 48000, &rate, fn, "sampleRate")) return NULL;
  if (!valid_rate(rate, 0)) return throw_range(env, fn, "sampleRate must be 8000, 12000, 16000, 24000 or 48000");
  int err = 0;
  OpusDecoder *d = opus_decoder_create((opus_int32)rate, 1, &err);
  if (!d) return opus_fail(env, fn, err);
  napi_value h = handle_new(env, K_OPUS_DEC, d, NULL, opus_decoder_get_size(1));
  if (!h) return throw_codec(env, "ERR_OPUS", fn, "out of memory");
  return h;
}

/*
 * opusDecode(h, payload: Uint8Array | null, offset, length, out: Int16Array, frameSamples, fec 0|1): samples.
 * payload null: conceal one lost frame of frameSamples (PLC). fec 1: rebuild the lost frame before
 * `payload` from its FEC data (frameSamples = the lost frame's length; PLC when the packet has none).
 * fec 0: decode the packet, at most frameSamples samples (the packet's own length is what comes out).
 */
static napi_value dec_decode(napi_env env, napi_callback_info info) {
  const char *fn = "opusDecode";
  napi_value a[7];
  uint8_t *pay = NULL;
  int16_t *out;
  size_t payl = 0, ol;
  int64_t off = 0, len = 0, n, fec;
  int have = 0; /* a payload was given (an empty array's data pointer may be NULL: not a PLC call) */
  napi_valuetype t;
  if (!args(env, info, 7, a, fn)) return NULL;
  handle_t *h = handle_get(env, a[0], K_OPUS_DEC, fn);
  if (!h) return NULL;
  if (napi_typeof(env, a[1], &t) != napi_ok) return NULL;
  if (t != napi_null) {
    have = 1;
    if (!arg_u8(env, a[1], &pay, &payl, fn, "payload") || !arg_int(env, a[2], 0, (int64_t)payl, &off, fn, "offset") ||
        !arg_int(env, a[3], 0, (int64_t)payl - off, &len, fn, "length"))
      return NULL;
  }
  if (!arg_i16(env, a[4], &out, &ol, fn, "out") || !arg_int(env, a[5], 1, 5760, &n, fn, "frameSamples") || !arg_int(env, a[6], 0, 1, &fec, fn, "fec")) return NULL;
  if ((size_t)n > ol) return throw_range(env, fn, "out is shorter than frameSamples");
  opus_int32 rate = 0;
  opus_decoder_ctl((OpusDecoder *)h->state, OPUS_GET_SAMPLE_RATE(&rate));
  if ((!have || fec) && !valid_frame(n, rate)) return throw_range(env, fn, "frameSamples is not an Opus frame size (2.5-60 ms) at the decoder's rate");
  if (have && len == 0) return throw_codec(env, "ERR_OPUS_INVALID_PACKET", fn, "an empty payload is not an Opus packet");
  int r = opus_decode((OpusDecoder *)h->state, have ? pay + off : NULL, have ? (opus_int32)len : 0, out, (int)n, (int)fec);
  if (r < 0) return opus_fail(env, fn, r);
  return int_value(env, r);
}

/* opusPacketSamples(payload, offset, length, sampleRate): the samples the packet decodes to, or throws */
static napi_value packet_samples(napi_env env, napi_callback_info info) {
  const char *fn = "opusPacketSamples";
  napi_value a[4];
  uint8_t *pay;
  size_t payl;
  int64_t off, len, rate;
  if (!args(env, info, 4, a, fn) || !arg_u8(env, a[0], &pay, &payl, fn, "payload") || !arg_int(env, a[1], 0, (int64_t)payl, &off, fn, "offset") ||
      !arg_int(env, a[2], 1, (int64_t)payl - off, &len, fn, "length") || !arg_int(env, a[3], 8000, 48000, &rate, fn, "sampleRate"))
    return NULL;
  int r = opus_packet_get_nb_samples(pay + off, (opus_int32)len, (opus_int32)rate);
  if (r < 0) return opus_fail(env, fn, r);
  return int_value(env, r);
}

void codec_opus_free(handle_t *h) {
  if (h->kind == K_OPUS_ENC) opus_encoder_destroy(h->state);
  else opus_decoder_destroy(h->state);
}

void codec_opus_init(napi_env env, napi_value exports) {
  EXPORT_FN(env, exports, "opusEncoderCreate", enc_create);
  EXPORT_FN(env, exports, "opusEncode", enc_encode);
  EXPORT_FN(env, exports, "opusEncoderNarrow", enc_narrow);
  EXPORT_FN(env, exports, "opusEncoderReset", enc_reset);
  EXPORT_FN(env, exports, "opusDecoderCreate", dec_create);
  EXPORT_FN(env, exports, "opusDecode", dec_decode);
  EXPORT_FN(env, exports, "opusPacketSamples", packet_samples);
  napi_value v;
  napi_create_string_utf8(env, opus_get_version_string(), NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, exports, "opusVersion", v);
}
