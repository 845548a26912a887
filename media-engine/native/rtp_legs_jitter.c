/*
 * The C legs' jitter buffer (rtp_legs.c's receive path fills it, its tick reads it): media-engine/jitter/
 * jitter-buffer.ts, line for line, with the same figures (reorder, late and duplicate drop, growth for a
 * late packet, the calm that gives a frame back, concealment, an overflow moving the playout point, a
 * stall's skip moving it on).
 */
#include "rtp_legs_int.h"
#include <stdlib.h>
#include <string.h>

static void jb_drop_first(leg_t *g) {
  g->pool[g->npool++] = g->ring[g->head];
  g->head = (g->head + 1) % (JB_CAP + 1);
  g->count--;
}

void jb_reset(leg_t *g) {
  while (g->count) jb_drop_first(g);
  g->jb_started = 0;
  g->skipped = 0;
  g->calm = 0;
  g->conceal_run = 0;
  g->played_any = 0;
}

/*
 * jitter-buffer.ts skip(): the worker could not run for `frames` pops (a stall its clock skipped rather
 * than caught up): the playout point moves on by as many, as the leg's RTP clock did. Left where the
 * stall found it, a far end with its own clock was heard the stall's length late for the rest of the
 * call (stall-playout.test.ts, C legs). What was due meanwhile is dropped, now or when it comes
 * (jb_reserve), without growing the buffer for it, and counted `stalled`, not late (not the far end's loss).
 */
void jb_skip(leg_t *g, int frames) {
  if (!g->jb_started || frames <= 0) return;
  g->skipped = 1;
  g->skipped_from = g->play_ts;
  g->play_ts = (int32_t)((uint32_t)g->play_ts + (uint32_t)frames * LEG_FRAME);
  g->skipped_to = g->play_ts;
  while (g->count && ts_diff((int32_t)((uint32_t)g->ring[g->head]->ts + (uint32_t)g->ring[g->head]->len), g->play_ts) <= 0) {
    /* (the frame last played stays held until the next pop: not counted) */
    if (ts_diff(g->ring[g->head]->ts, g->skipped_from) >= 0) g->stalled++;
    jb_drop_first(g);
  }
}

/* a packet at `ts` was due in the time a stall skipped */
static int jb_was_skipped(leg_t *g, int32_t ts) {
  return g->skipped && ts_diff(ts, g->skipped_from) >= 0 && ts_diff(ts, g->skipped_to) < 0;
}

static void jb_grow(leg_t *g) {
  if (g->target < MAX_FRAMES) {
    g->target++;
    g->play_ts = (int32_t)((uint32_t)g->play_ts - LEG_FRAME);
  }
  g->calm = 0;
}

/* at its widest and holding nothing at or after the playout point: a late packet is a sender behind the clock */
static int jb_behind(leg_t *g) {
  jentry_t *e = g->count ? jat(g, g->count - 1) : NULL;
  return g->target >= MAX_FRAMES && (!e || ts_diff((int32_t)((uint32_t)e->ts + (uint32_t)e->len), g->play_ts) <= 0);
}

int16_t *jb_reserve(leg_t *g, int32_t ts, int len) {
  for (int again = 0; again < 2; again++) {
    if (!g->jb_started) {
      g->jb_started = 1;
      g->play_ts = (int32_t)((uint32_t)ts - (uint32_t)(g->target * LEG_FRAME));
    } else {
      int32_t d = ts_diff(ts, g->play_ts);
      if ((int64_t)d + len <= 0) {
        if (jb_was_skipped(g, ts)) {
          g->stalled++; /* due while the worker stalled: dropped as the audio the leg did not send then */
          return NULL;
        }
        g->late++;
        if (d > -LEG_FRAME * 50 && !jb_behind(g)) {
          jb_grow(g);
          return NULL;
        }
        jb_reset(g); /* a jump backwards (the sender restarted), or a sender behind the clock by more than the widest buffer */
        continue;
      }
      if (d > LEG_FRAME * 50 * 5) {
        jb_reset(g);
        continue;
      }
    }
    break;
  }
  int i = g->count;
  while (i > 0 && ts_diff(jat(g, i - 1)->ts, ts) > 0) i--;
  if (i > 0 && jat(g, i - 1)->ts == ts) return NULL;
  jentry_t *e = g->pool[g->npool - 1];
  if (e->cap < len) {
    int cap = len > LEG_FRAME ? len : LEG_FRAME;
    int16_t *s = realloc(e->s, (size_t)cap * sizeof *s);
    if (!s) return NULL;
    e->s = s;
    e->cap = cap;
  }
  g->npool--;
  e->ts = ts;
  e->len = len;
  const int n = JB_CAP + 1;
  for (int j = g->count; j > i; j--) g->ring[(g->head + j) % n] = g->ring[(g->head + j - 1) % n];
  g->ring[(g->head + i) % n] = e;
  g->count++;
  if (g->count > JB_CAP) {
    /* more came unread than it holds (a burst after a stall): the oldest go, down to its depth, and the
       playout point moves up to the oldest left. Left behind them, it found nothing at any later read
       while each new packet pushed the oldest out: the talker unheard for as long as they talked
       (c-legs.test.ts, "a burst past the jitter buffer's capacity"). */
    while (g->count > g->target) {
      jb_drop_first(g);
      g->dropped++;
    }
    if (ts_diff(jat(g, 0)->ts, g->play_ts) > 0) g->play_ts = jat(g, 0)->ts;
  }
  return e->s;
}

static double jb_depth(leg_t *g) {
  if (!g->jb_started || g->count == 0) return 0;
  jentry_t *e = jat(g, g->count - 1);
  double d = ts_diff((int32_t)((uint32_t)e->ts + (uint32_t)e->len), g->play_ts) / (double)LEG_FRAME;
  return d > 0 ? d : 0;
}

static int jb_quiet(const int16_t *x) {
  int32_t sum = 0;
  for (int i = 0; i < LEG_FRAME; i++) sum += x[i] < 0 ? -x[i] : x[i];
  return sum < JB_QUIET * LEG_FRAME;
}

int jb_pop(leg_t *g, int16_t *out) {
  if (!g->jb_started) {
    memset(out, 0, LEG_FRAME * sizeof *out);
    return 0;
  }
  int filled = 0;
  int32_t start = g->play_ts;
  while (g->count && ts_diff((int32_t)((uint32_t)g->ring[g->head]->ts + (uint32_t)g->ring[g->head]->len), start) <= 0) jb_drop_first(g);
  jentry_t *first = g->count ? g->ring[g->head] : NULL;
  if (!first || first->ts != start || first->len < LEG_FRAME) memset(out, 0, LEG_FRAME * sizeof *out);
  for (int i = 0; i < g->count; i++) {
    jentry_t *e = jat(g, i);
    int32_t off = ts_diff(e->ts, start);
    if (off >= LEG_FRAME) break;
    int from = off < 0 ? -off : 0;
    int to = e->len < LEG_FRAME - off ? e->len : LEG_FRAME - off;
    if (to > from) memcpy(out + off + from, e->s + from, (size_t)(to - from) * sizeof *out);
    if (to > from) filled += to - from;
  }
  g->play_ts = (int32_t)((uint32_t)g->play_ts + LEG_FRAME);
  if (filled == 0) {
    if (!g->played_any) return 1;
    g->concealed++;
    g->conceal_run++;
    if (g->count == 0 && g->conceal_run > 50) {
      jb_reset(g);
      return 0;
    }
    if (g->conceal_run <= 3) {
      double gain = 1 - g->conceal_run / 4.0;
      for (int k = 0; k < LEG_FRAME; k++) out[k] = (int16_t)(g->last[k] * gain);
    }
  } else {
    g->conceal_run = 0;
    g->played_any = 1;
    memcpy(g->last, out, sizeof g->last);
  }
  /* jitter-buffer.ts: 10 s without lateness and never under 2 frames ahead: one frame given back, the
     one after a quiet frame played (counted as dropped) */
  if (jb_depth(g) < 2) g->calm = 0;
  else if (++g->calm > JB_CALM_POPS && g->target > MIN_FRAMES && filled > 0 && jb_quiet(out)) {
    g->calm = 0;
    g->target--;
    g->dropped++;
    g->play_ts = (int32_t)((uint32_t)g->play_ts + LEG_FRAME);
  }
  return 1;
}
