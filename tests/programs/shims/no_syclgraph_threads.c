// LD_PRELOAD shim for tests/tests/faults.rs: pthread_create fails with
// EAGAIN (what RLIMIT_NPROC or an exhausted kernel thread table give) when
// called from code inside libsyclgraph.so, and works for everyone else. As
// root, RLIMIT_NPROC is not enforced, and a real limit would stop the
// runtime's own threads too; this fails syclgraph's thread only.
// Build: cc -shared -fPIC -O1 -o libno_syclgraph_threads.so no_syclgraph_threads.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                   void *arg) {
  static create_fn real;
  if (!real) real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
  Dl_info info;
  if (dladdr(__builtin_return_address(0), &info) && info.dli_fname &&
      strstr(info.dli_fname, "libsyclgraph")) {
    return EAGAIN;
  }
  return real(thread, attr, start, arg);
}
