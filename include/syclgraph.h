/* syclgraph.h: start and stop syclgraph's tracing from the program itself.
 *
 * Header only, no library to link: the functions are looked up at run time
 * (dlsym(RTLD_DEFAULT, ...), once, then cached). When the program runs
 * without syclgraph (XPTI_SUBSCRIBERS does not name libsyclgraph.so) they do
 * nothing and return 0, so the calls can ship in a release build.
 *
 *   #include "syclgraph.h"
 *   syclgraph_start();   // commands submitted from now on are recorded
 *   ...
 *   syclgraph_stop();    // ... up to here (they are still timed to the end)
 *
 * Link with -ldl on glibc older than 2.34. Any thread, any time; the calls
 * never block. C and C++.
 */
#ifndef SYCLGRAPH_H
#define SYCLGRAPH_H

#include <dlfcn.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*syclgraph_control_fn)(void);

/* The function `name` of a loaded libsyclgraph.so, or NULL. Looked up until
 * found (syclgraph is loaded when the SYCL runtime starts, which may come
 * after the first call). */
static inline syclgraph_control_fn syclgraph_lookup_(const char *name,
                                                     syclgraph_control_fn *cache) {
  syclgraph_control_fn fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (fn == 0) {
    void *symbol = dlsym(RTLD_DEFAULT, name);
    fn = (syclgraph_control_fn)symbol;
    if (fn != 0)
      __atomic_store_n(cache, fn, __ATOMIC_RELEASE);
  }
  return fn;
}

/* Starts tracing; 1 if it was stopped, 0 otherwise or without syclgraph. */
static inline int syclgraph_start(void) {
  static syclgraph_control_fn cache;
  syclgraph_control_fn fn = syclgraph_lookup_("syclgraph_start", &cache);
  return fn ? fn() : 0;
}

/* Stops tracing; 1 if it was on, 0 otherwise or without syclgraph. */
static inline int syclgraph_stop(void) {
  static syclgraph_control_fn cache;
  syclgraph_control_fn fn = syclgraph_lookup_("syclgraph_stop", &cache);
  return fn ? fn() : 0;
}

/* 1 while syclgraph records new submissions, 0 otherwise or without it. */
static inline int syclgraph_is_active(void) {
  static syclgraph_control_fn cache;
  syclgraph_control_fn fn = syclgraph_lookup_("syclgraph_is_active", &cache);
  return fn ? fn() : 0;
}

#ifdef __cplusplus
}
#endif

#endif /* SYCLGRAPH_H */
