/*
 * The media worker's codecs (media-engine/native/codecs.ts): Opus through Debian's libopus, G.722 and
 * its packet loss concealment through libspandsp, libspeexdsp's resampler and echo canceller. N-API only; built at
 * set-up by scripts/build-native.sh with the C compiler, no node-gyp. This file holds the handles and
 * the argument checks; codec_opus.c, codec_g722.c, codec_resample.c and codec_aec.c the codec calls.
 *
 * Every state lives behind a type-tagged external: a handle of another kind, a closed one or any other
 * value is refused with a TypeError, so a call can never reach the wrong state. Every buffer argument
 * must be a typed array of the named type and is length-checked before anything writes into it.
 */
#include "codec_common.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* one tag per kind (random constants; napi_check_object_type_tag compares both halves) */
static const napi_type_tag TAGS[K_COUNT] = {
  { 0x6f70757365e4c0deULL, 0x1a2b3c4d5e6f7081ULL }, /* opus encoder */
  { 0x6f70757364e4c0deULL, 0x1a2b3c4d5e6f7082ULL }, /* opus decoder */
  { 0x6737323265e4c0deULL, 0x1a2b3c4d5e6f7083ULL }, /* g722 encoder */
  { 0x6737323264e4c0deULL, 0x1a2b3c4d5e6f7084ULL }, /* g722 decoder */
  { 0x7273616d70e4c0deULL, 0x1a2b3c4d5e6f7085ULL }, /* resampler */
  { 0x6165636563e4c0deULL, 0x1a2b3c4d5e6f7086ULL }, /* echo canceller */
};
static const char *KIND_NAMES[K_COUNT] = { "Opus encoder", "Opus decoder", "G.722 encoder", "G.722 decoder", "resampler", "echo canceller" };

static napi_value throw_with(napi_env env, int kind, const char *code, const char *fn, const char *what) {
  char msg[200];
  snprintf(msg, sizeof msg, "%s: %s", fn, what);
  napi_value c, m, err;
  napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &c);
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &m);
  if (kind == 0) napi_create_type_error(env, c, m, &err);
  else if (kind == 1) napi_create_range_error(env, c, m, &err);
  else napi_create_error(env, c, m, &err);
  napi_throw(env, err);
  return NULL;
}

napi_value throw_type(napi_env env, const char *fn, const char *what) { return throw_with(env, 0, "ERR_INVALID_ARG_TYPE", fn, what); }
napi_value throw_range(napi_env env, const char *fn, const char *what) { return throw_with(env, 1, "ERR_OUT_OF_RANGE", fn, what); }
napi_value throw_codec(napi_env env, const char *code, const char *fn, const char *what) { return throw_with(env, 2, code, fn, what); }

void codec_free_state(handle_t *h) {
  switch (h->kind) {
    case K_OPUS_ENC:
    case K_OPUS_DEC: codec_opus_free(h); break;
    case K_G722_ENC:
    case K_G722_DEC: codec_g722_free(h); break;
    case K_RESAMPLER: codec_resample_free(h); break;
    case K_AEC: codec_aec_free(h); break;
    default: break;
  }
  h->state = NULL;
  h->extra = NULL;
}

void handle_release(napi_env env, handle_t *h) {
  if (!h->state) return;
  codec_free_state(h);
  if (h->ext_memory) {
    int64_t left;
    napi_adjust_external_memory(env, -h->ext_memory, &left);
    h->ext_memory = 0;
  }
}

static void handle_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  handle_t *h = data;
  /* a handle the script never closed: free its state with it */
  if (h->state) handle_release(env, h);
  free(h);
}

napi_value handle_new(napi_env env, handle_kind kind, void *state, void *extra, int64_t ext_memory) {
  handle_t *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->kind = kind;
  h->state = state;
  h->extra = extra;
  h->ext_memory = ext_memory;
  napi_value ext;
  if (napi_create_external(env, h, handle_finalize, NULL, &ext) != napi_ok) {
    codec_free_state(h);
    free(h);
    return NULL;
  }
  napi_type_tag_object(env, ext, &TAGS[kind]);
  if (ext_memory) {
    int64_t total;
    napi_adjust_external_memory(env, ext_memory, &total);
  }
  return ext;
}

handle_t *handle_get(napi_env env, napi_value v, handle_kind kind, const char *fn) {
  napi_valuetype t;
  bool ok = false;
  char what[80];
  snprintf(what, sizeof what, "the handle is not a %s", KIND_NAMES[kind]);
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_external || napi_check_object_type_tag(env, v, &TAGS[kind], &ok) != napi_ok || !ok) {
    throw_type(env, fn, what);
    return NULL;
  }
  void *data = NULL;
  napi_get_value_external(env, v, &data);
  handle_t *h = data;
  if (!h || !h->state) {
    snprintf(what, sizeof what, "the %s is closed", KIND_NAMES[kind]);
    throw_codec(env, "ERR_CODEC_CLOSED", fn, what);
    return NULL;
  }
  return h;
}

int args(napi_env env, napi_callback_info info, size_t want, napi_value *argv, const char *fn) {
  size_t argc = want;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < want) {
    char what[96];
    snprintf(what, sizeof what, "expects %zu arguments, got %zu", want, argc);
    throw_type(env, fn, what);
    return 0;
  }
  return 1;
}

int arg_int(napi_env env, napi_value v, int64_t min, int64_t max, int64_t *out, const char *fn, const char *name) {
  napi_valuetype t;
  double d = 0;
  char what[120];
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_number || napi_get_value_double(env, v, &d) != napi_ok) {
    snprintf(what, sizeof what, "%s must be a number", name);
    throw_type(env, fn, what);
    return 0;
  }
  if (!isfinite(d) || d != floor(d) || d < (double)min || d > (double)max) {
    snprintf(what, sizeof what, "%s must be an integer from %lld to %lld", name, (long long)min, (long long)max);
    throw_range(env, fn, what);
    return 0;
  }
  *out = (int64_t)d;
  return 1;
}

static int arg_typed(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *len, const char *fn, const char *name, const char *tname) {
  bool is = false;
  napi_typedarray_type t;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is || napi_get_typedarray_info(env, v, &t, len, data, NULL, NULL) != napi_ok || t != want) {
    char what[120];
    snprintf(what, sizeof what, "%s must be %s", name, tname);
    throw_type(env, fn, what);
    return 0;
  }
  return 1;
}

int arg_i16(napi_env env, napi_value v, int16_t **data, size_t *len, const char *fn, const char *name) {
  void *d = NULL;
  if (!arg_typed(env, v, napi_int16_array, &d, len, fn, name, "an Int16Array")) return 0;
  *data = d;
  return 1;
}

int arg_u8(napi_env env, napi_value v, uint8_t **data, size_t *len, const char *fn, const char *name) {
  void *d = NULL;
  if (!arg_typed(env, v, napi_uint8_array, &d, len, fn, name, "a Uint8Array or Buffer")) return 0;
  *data = d;
  return 1;
}

napi_value int_value(napi_env env, int64_t n) {
  napi_value out;
  napi_create_int64(env, n, &out);
  return out;
}

/* close(handle): frees any handle's native state now; closing twice is harmless, a non-handle throws */
static napi_value codec_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!args(env, info, 1, argv, "close")) return NULL;
  napi_valuetype t;
  if (napi_typeof(env, argv[0], &t) != napi_ok || t != napi_external) return throw_type(env, "close", "not a codec handle");
  for (int k = 0; k < K_COUNT; k++) {
    bool ok = false;
    if (napi_check_object_type_tag(env, argv[0], &TAGS[k], &ok) == napi_ok && ok) {
      void *data = NULL;
      napi_get_value_external(env, argv[0], &data);
      if (data) handle_release(env, data);
      return NULL;
    }
  }
  return throw_type(env, "close", "not a codec handle");
}

NAPI_MODULE_INIT() {
  EXPORT_FN(env, exports, "close", codec_close);
  codec_opus_init(env, exports);
  codec_g722_init(env, exports);
  codec_resample_init(env, exports);
  codec_aec_init(env, exports);
  return exports;
}
