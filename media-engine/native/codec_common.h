/*
 * Shared by the codec module's C files (codecs.c, codec_opus.c, codec_g722.c, codec_resample.c, codec_aec.c):
 * the handle every codec state lives behind, and argument checks that throw a TypeError or RangeError
 * naming the argument. Every function taking a buffer checks its type and length before touching it.
 */
#ifndef OPENVOICE_CODEC_COMMON_H
#define OPENVOICE_CODEC_COMMON_H
#include <node_api.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { K_OPUS_ENC = 0, K_OPUS_DEC, K_G722_ENC, K_G722_DEC, K_RESAMPLER, K_AEC, K_COUNT } handle_kind;

/*
 * One native state behind a JS external. close() frees `state` at once and sets it NULL (later calls
 * throw "closed"); the external's finaliser frees what close() did not and the handle itself.
 */
typedef struct {
  handle_kind kind;
  void *state;
  void *extra;        /* a second state owned with the first (the G.722 decoder's PLC, the AEC's suppressor) */
  int64_t ext_memory; /* bytes reported to V8 with napi_adjust_external_memory */
  int last_narrow;    /* the G.722 encoder's last frame was 8 kHz audio (its band-split filter then holds none) */
} handle_t;

/* A new external for `state` of `kind`, tagged so that only this module's handles of that kind pass. */
napi_value handle_new(napi_env env, handle_kind kind, void *state, void *extra, int64_t ext_memory);
/* The open handle of `kind` in v, or NULL after throwing (wrong type, other kind, closed). */
handle_t *handle_get(napi_env env, napi_value v, handle_kind kind, const char *fn);
/* Frees the handle's states (idempotent). */
void handle_release(napi_env env, handle_t *h);

/* Throws; return NULL from the callback after these. */
napi_value throw_type(napi_env env, const char *fn, const char *what);
napi_value throw_range(napi_env env, const char *fn, const char *what);
napi_value throw_codec(napi_env env, const char *code, const char *fn, const char *what);

/* 1 when v is an integer number in [min, max] (stored in *out); else 0 after throwing. */
int arg_int(napi_env env, napi_value v, int64_t min, int64_t max, int64_t *out, const char *fn, const char *name);
/* 1 when v is a typed array of that type (data, element count); else 0 after throwing. */
int arg_i16(napi_env env, napi_value v, int16_t **data, size_t *len, const char *fn, const char *name);
int arg_u8(napi_env env, napi_value v, uint8_t **data, size_t *len, const char *fn, const char *name);
/* argc checked: 1 when at least `want` arguments came; else 0 after throwing. */
int args(napi_env env, napi_callback_info info, size_t want, napi_value *argv, const char *fn);
napi_value int_value(napi_env env, int64_t n);

/* Each file's exported functions, added to the module's exports by codecs.c. */
void codec_opus_init(napi_env env, napi_value exports);
void codec_g722_init(napi_env env, napi_value exports);
void codec_resample_init(napi_env env, napi_value exports);
void codec_aec_init(napi_env env, napi_value exports);
void codec_free_state(handle_t *h); /* by kind; in codecs.c, calling each file's free */
void codec_opus_free(handle_t *h);
void codec_g722_free(handle_t *h);
void codec_resample_free(handle_t *h);
void codec_aec_free(handle_t *h);

#define EXPORT_FN(env, exports, name, fn)                         \
  do {                                                            \
    napi_value f_;                                                \
    napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &f_); \
    napi_set_named_property(env, exports, name, f_);              \
  } while (0)

#endif
