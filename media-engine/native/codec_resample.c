/*
 * Sample-rate conversion between 8, 16 and 48 kHz (and any other pair) with libspeexdsp's resampler:
 * a windowed-sinc filter bank, one state per stream so consecutive frames join without a seam.
 */
#include "codec_common.h"
#include <speex/speex_resampler.h>

/* resamplerCreate(inRate, outRate, quality 0-10) */
static napi_value rs_create(napi_env env, napi_callback_info info) {
  const char *fn = "resamplerCreate";
  napi_value a[3];
  int64_t in, out, q;
  if (!args(env, info, 3, a, fn) || !arg_int(env, a[0], 1000, 192000, &in, fn, "inRate") || !arg_int(env, a[1], 1000, 192000, &out, fn, "outRate") ||
      !arg_int(env, a[2], 0, 10, &q, fn, "quality"))
    return NULL;
  int err = 0;
  SpeexResamplerState *s = speex_resampler_init(1, (spx_uint32_t)in, (spx_uint32_t)out, (int)q, &err);
  if (!s) return throw_codec(env, "ERR_RESAMPLER", fn, speex_resampler_strerror(err));
  napi_value h = handle_new(env, K_RESAMPLER, s, NULL, 0);
  if (!h) return throw_codec(env, "ERR_RESAMPLER", fn, "out of memory");
  return h;
}

/* resample(h, input: Int16Array, samples, out: Int16Array): samples written; all input is consumed or it throws */
static napi_value rs_process(napi_env env, napi_callback_info info) {
  const char *fn = "resample";
  napi_value a[4];
  int16_t *in, *out;
  size_t il, ol;
  int64_t n;
  if (!args(env, info, 4, a, fn)) return NULL;
  handle_t *h = handle_get(env, a[0], K_RESAMPLER, fn);
  if (!h || !arg_i16(env, a[1], &in, &il, fn, "input") || !arg_int(env, a[2], 0, (int64_t)il, &n, fn, "samples") || !arg_i16(env, a[3], &out, &ol, fn, "out")) return NULL;
  spx_uint32_t in_len = (spx_uint32_t)n, out_len = (spx_uint32_t)ol;
  int err = speex_resampler_process_int(h->state, 0, in, &in_len, out, &out_len);
  if (err != RESAMPLER_ERR_SUCCESS) return throw_codec(env, "ERR_RESAMPLER", fn, speex_resampler_strerror(err));
  if (in_len != (spx_uint32_t)n) return throw_range(env, fn, "out is too short for the converted input");
  return int_value(env, out_len);
}

/* resamplerLatency(h): the filter's delay in input samples */
static napi_value rs_latency(napi_env env, napi_callback_info info) {
  napi_value a[1];
  if (!args(env, info, 1, a, "resamplerLatency")) return NULL;
  handle_t *h = handle_get(env, a[0], K_RESAMPLER, "resamplerLatency");
  if (!h) return NULL;
  return int_value(env, speex_resampler_get_input_latency(h->state));
}

void codec_resample_free(handle_t *h) { speex_resampler_destroy(h->state); }

void codec_resample_init(napi_env env, napi_value exports) {
  EXPORT_FN(env, exports, "resamplerCreate", rs_create);
  EXPORT_FN(env, exports, "resample", rs_process);
  EXPORT_FN(env, exports, "resamplerLatency", rs_latency);
}
