/*
 * Acoustic echo cancellation with libspeexdsp (speex_echo_*: the MDF adaptive filter, frequency-domain
 * blocks with a double-talk-aware learning rate) and, when asked, its residual echo suppressor
 * (speex_preprocess with the echo state: a spectral gain from the filter's estimate of the echo left).
 * One state per stream: the near end is what came from the phone (the caller and the echo of what we
 * sent), the far end what we sent, frame by frame in step. Nothing is allocated after aecCreate.
 */
#include "codec_common.h"
#include <math.h>
#include <stdlib.h>
#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>

typedef struct {
  SpeexEchoState *echo;
  int frame;
  int64_t passed; /* frames passed on without the echo estimate (the filter's output was louder) */
  /* the DC notch speexdsp runs on the near end before its filter, run here too: zeros at DC, poles at
   * radius r (speexdsp's: 0.9 under 12 kHz, 0.982 under 24 kHz), gain r; x1, x2 the last inputs, v1, v2
   * the last unscaled outputs */
  double r, den2, x1, x2, v1, v2;
} aec_t;

/* near through the notch into plain: the canceller's output when it predicts no echo at all */
static void dc_notch(aec_t *s, const int16_t *near, int16_t *plain) {
  for (int i = 0; i < s->frame; i++) {
    double x = near[i];
    double v = x - 2 * s->x1 + s->x2 + 2 * s->r * s->v1 - s->den2 * s->v2;
    s->x2 = s->x1;
    s->x1 = x;
    s->v2 = s->v1;
    s->v1 = v;
    double y = s->r * v;
    plain[i] = (int16_t)(y > 32767 ? 32767 : y < -32768 ? -32768 : lrint(y));
  }
}

/* aecCreate(rate, frameSamples, tailSamples, residualDb): residualDb 0 = the filter alone, else the
 * residual echo is suppressed by up to that many dB (by half as much while the caller talks) */
static napi_value aec_create(napi_env env, napi_callback_info info) {
  const char *fn = "aecCreate";
  napi_value a[4];
  int64_t rate, frame, tail, res;
  if (!args(env, info, 4, a, fn) || !arg_int(env, a[0], 8000, 48000, &rate, fn, "rate") || !arg_int(env, a[1], 40, 2048, &frame, fn, "frameSamples") ||
      !arg_int(env, a[2], frame, 48000, &tail, fn, "tailSamples") || !arg_int(env, a[3], 0, 60, &res, fn, "residualDb"))
    return NULL;
  aec_t *s = calloc(1, sizeof *s);
  if (!s) return throw_codec(env, "ERR_AEC", fn, "out of memory");
  s->frame = (int)frame;
  s->r = rate < 12000 ? 0.9 : rate < 24000 ? 0.982 : 0.992;
  s->den2 = s->r * s->r + 0.7 * (1 - s->r) * (1 - s->r);
  s->echo = speex_echo_state_init((int)frame, (int)tail);
  if (!s->echo) {
    free(s);
    return throw_codec(env, "ERR_AEC", fn, "speex_echo_state_init failed");
  }
  int r = (int)rate;
  speex_echo_ctl(s->echo, SPEEX_ECHO_SET_SAMPLING_RATE, &r);
  SpeexPreprocessState *pp = NULL;
  if (res > 0) {
    pp = speex_preprocess_state_init((int)frame, r);
    if (!pp) {
      speex_echo_state_destroy(s->echo);
      free(s);
      return throw_codec(env, "ERR_AEC", fn, "speex_preprocess_state_init failed");
    }
    /* the residual echo suppressor only: no noise suppression, no gain control.
     * speexdsp computes the echo's share inside its noise suppressor, so that runs with a 0 dB floor
     * for noise (-1: the least it takes) */
    int on = 1, off = 0, noise = -1, sup = -(int)res, active = -(int)(res / 2);
    speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_DENOISE, &on);
    speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &noise);
    speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_AGC, &off);
    speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_DEREVERB, &off);
    speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_ECHO_SUPPRESS, &sup);
    speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE, &active);
    speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_ECHO_STATE, s->echo);
  }
  /* the filter's memory (a handful of tail-long float arrays), reported to V8 so it weighs on collection */
  napi_value h = handle_new(env, K_AEC, s, pp, (int64_t)tail * 48 + frame * 200);
  if (!h) return throw_codec(env, "ERR_AEC", fn, "out of memory");
  return h;
}

/* aecProcess(h, near, far, out): one frame (frameSamples each) of the near end with the echo of the
 * far end taken out, into out (which may be near) */
static napi_value aec_process(napi_env env, napi_callback_info info) {
  const char *fn = "aecProcess";
  napi_value a[4];
  int16_t *near, *far, *out;
  size_t nl, fl, ol;
  if (!args(env, info, 4, a, fn)) return NULL;
  handle_t *h = handle_get(env, a[0], K_AEC, fn);
  if (!h || !arg_i16(env, a[1], &near, &nl, fn, "near") || !arg_i16(env, a[2], &far, &fl, fn, "far") || !arg_i16(env, a[3], &out, &ol, fn, "out")) return NULL;
  aec_t *s = h->state;
  if (nl != (size_t)s->frame || fl != (size_t)s->frame || ol != (size_t)s->frame) return throw_range(env, fn, "near, far and out must each be one frame (frameSamples)");
  /* speex_echo_cancellation reads near while it writes: the output goes through the stack */
  int16_t tmp[2048], plain[2048];
  dc_notch(s, near, plain);
  speex_echo_cancellation(s->echo, near, far, tmp);
  /* a filter that lost the path (the echo's delay moved: a jitter buffer grew) adds a shifted copy of the
   * echo instead of taking it out; a frame it made louder than the near end with no echo taken out goes
   * on as that, while the filter relearns (its own state is not touched). Never the frame as it came:
   * the notch shifts the phase of the lowest tones, so a frame as it came between notched ones is a
   * step at each switch (a click each 20 ms to the VAD and the recogniser, even with nothing sent) */
  double en = 0, eo = 0;
  for (int i = 0; i < s->frame; i++) {
    en += (double)plain[i] * plain[i];
    eo += (double)tmp[i] * tmp[i];
  }
  const int16_t *src = tmp;
  if (eo > en) {
    s->passed++;
    src = plain;
  }
  for (int i = 0; i < s->frame; i++) out[i] = src[i];
  if (h->extra) speex_preprocess_run(h->extra, out);
  return NULL;
}

/* aecReset(h): forgets the echo path (a new call on the same state) */
static napi_value aec_reset(napi_env env, napi_callback_info info) {
  napi_value a[1];
  if (!args(env, info, 1, a, "aecReset")) return NULL;
  handle_t *h = handle_get(env, a[0], K_AEC, "aecReset");
  if (!h) return NULL;
  aec_t *s = h->state;
  speex_echo_state_reset(s->echo);
  s->x1 = s->x2 = s->v1 = s->v2 = 0;
  return NULL;
}

void codec_aec_free(handle_t *h) {
  aec_t *s = h->state;
  if (h->extra) speex_preprocess_state_destroy(h->extra);
  speex_echo_state_destroy(s->echo);
  free(s);
}

void codec_aec_init(napi_env env, napi_value exports) {
  EXPORT_FN(env, exports, "aecCreate", aec_create);
  EXPORT_FN(env, exports, "aecProcess", aec_process);
  EXPORT_FN(env, exports, "aecReset", aec_reset);
}
