// A thin libze_loader.so.1 in front of the real Level Zero loader, for tests
// that run the Unified Runtime's Level Zero adapter over ze-test-driver.
//
// Why: the 2026.2 adapters carry a static Level Zero loader of their own,
// which opens the system's libze_loader.so.1, fetches its API 1.4 tables and
// looks newer functions up by name (dlsym). Debian's loader (1.8.12) has no
// zeDeviceGetRootDevice, and the adapter's static loader checks for that
// only on its first call: the first urDeviceGet works, the second jumps to
// address 0 (SIGSEGV in urDeviceGet). This library forwards every function
// of the real loader and adds zeDeviceGetRootDevice, answering "no root
// device" (what a FLAT device hierarchy answers). Nothing else changes: the
// real loader still loads the driver named in ZE_ENABLE_ALT_DRIVERS and
// dispatches every call.
//
// Use: put this file, built as <dir>/libze_loader.so.1, first in
// LD_LIBRARY_PATH. The real loader is SYCLGRAPH_REAL_ZE_LOADER, else the first
// of the usual multiarch paths that exists.
// Build: cc -shared -fPIC -O1 -I/usr/include -o libze_loader.so.1 ze_loader_padding.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

// Every symbol forwarded as is, a jump through a pointer resolved at load:
// every C function the 1.8.12 loader exports (ze_loader_1_8_symbols.h, one
// X(name) a line, from `nm -D`).
#define X(name) __attribute__((visibility("hidden"))) void *real_##name;
#include "ze_loader_1_8_symbols.h"
#undef X

#define X(name)                                                                        \
  __asm__(".globl " #name "\n.type " #name ", @function\n" #name ":\n"                 \
          "  jmp *real_" #name "(%rip)\n.size " #name ", .-" #name "\n");
#include "ze_loader_1_8_symbols.h"
#undef X

static ze_result_t missing(void) { return ZE_RESULT_ERROR_UNINITIALIZED; }

// What a FLAT device hierarchy answers: no root device.
__attribute__((visibility("default"))) ze_result_t zeDeviceGetRootDevice(
    ze_device_handle_t device, ze_device_handle_t *root) {
  (void)device;
  if (!root) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *root = NULL;
  return ZE_RESULT_SUCCESS;
}

static ze_result_t (*real_zeLoaderInit)(void);

// The real zeLoaderInit once. Each call of the 1.8.12 loader's adds the
// drivers again to its list; with more than one entry it wraps handles in
// objects that point into that list, which the next call reallocates (every
// adapter, and each Unified Runtime loader's copy of it, calls zeLoaderInit).
__attribute__((visibility("default"))) ze_result_t zeLoaderInit(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  static ze_result_t first = ZE_RESULT_ERROR_UNINITIALIZED;
  void init(void) { first = real_zeLoaderInit(); }
  pthread_once(&once, init);
  return first;
}

__attribute__((constructor)) static void open_real_loader(void) {
  const char *paths[] = {getenv("SYCLGRAPH_REAL_ZE_LOADER"),
                         "/usr/lib/x86_64-linux-gnu/libze_loader.so.1",
                         "/usr/lib64/libze_loader.so.1", "/usr/lib/libze_loader.so.1"};
  void *real = NULL;
  for (size_t i = 0; i < sizeof paths / sizeof *paths && !real; i++)
    if (paths[i] && access(paths[i], R_OK) == 0) real = dlopen(paths[i], RTLD_NOW | RTLD_GLOBAL);
  if (!real) {
    fprintf(stderr, "ze_loader_padding: cannot open the real libze_loader.so.1 (%s)\n",
            dlerror());
    return;
  }
#define X(name)                                        \
  real_##name = dlsym(real, #name);                    \
  if (!real_##name) real_##name = (void *)missing;
#include "ze_loader_1_8_symbols.h"
#undef X
  real_zeLoaderInit = (ze_result_t(*)(void))dlsym(real, "zeLoaderInit");
  if (!real_zeLoaderInit) real_zeLoaderInit = missing;
}
