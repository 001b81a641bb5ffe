// itt.hpp: the ittnotify collector protocol, done by hand (no ittnotify
// library is packaged for C++ on this machine): itt_init() dlopens the
// library named by INTEL_LIBITTNOTIFY64 and calls its __itt_api_init with a
// global listing the ITT functions, as the ittnotify static part does; the
// pointers below are then the collector's (null without one).
// Layouts from intel/ittapi include/ittnotify.h and src/ittnotify/ittnotify_config.h.
#pragma once

#include <dlfcn.h>
#include <pthread.h>

#include <cstdlib>

struct itt_id { unsigned long long d1, d2, d3; };
struct itt_domain { int flags; const char *nameA; void *nameW; int extra1; void *extra2; itt_domain *next; };
struct itt_string_handle { const char *strA; void *strW; int extra1; void *extra2; itt_string_handle *next; };
struct itt_api_info { const char *name; void **func_ptr; void *init_func; void *null_func; int group; };
struct itt_global {
  unsigned char magic[8];
  unsigned long version_major, version_minor, version_build;
  long api_initialized, mutex_initialized, atomic_counter;
  pthread_mutex_t mutex;
  void *lib, *error_handler;
  const char **dll_path_ptr;
  itt_api_info *api_list_ptr;
};

inline void (*itt_pause)();
inline void (*itt_resume)();
inline itt_domain *(*itt_domain_create)(const char *);
inline itt_string_handle *(*itt_string_handle_create)(const char *);
inline void (*itt_task_begin)(const itt_domain *, itt_id, itt_id, itt_string_handle *);
inline void (*itt_task_end)(const itt_domain *);
inline void (*itt_task_begin_overlapped)(const itt_domain *, itt_id, itt_id, itt_string_handle *);
inline void (*itt_task_end_overlapped)(const itt_domain *, itt_id);

// Loads the collector; false without one.
inline bool itt_init() {
  const char *lib = std::getenv("INTEL_LIBITTNOTIFY64");
  if (!lib) return false;
  void *handle = dlopen(lib, RTLD_LAZY);
  if (!handle) return false;
  auto api_init = (void (*)(itt_global *, int))dlsym(handle, "__itt_api_init");
  if (!api_init) return false;
  static itt_api_info list[] = {
      {"__itt_pause", (void **)&itt_pause, nullptr, nullptr, 0},
      {"__itt_resume", (void **)&itt_resume, nullptr, nullptr, 0},
      {"__itt_domain_create", (void **)&itt_domain_create, nullptr, nullptr, 0},
      {"__itt_string_handle_create", (void **)&itt_string_handle_create, nullptr, nullptr, 0},
      {"__itt_task_begin", (void **)&itt_task_begin, nullptr, nullptr, 0},
      {"__itt_task_end", (void **)&itt_task_end, nullptr, nullptr, 0},
      {"__itt_task_begin_overlapped", (void **)&itt_task_begin_overlapped, nullptr, nullptr, 0},
      {"__itt_task_end_overlapped", (void **)&itt_task_end_overlapped, nullptr, nullptr, 0},
      {nullptr, nullptr, nullptr, nullptr, 0},
  };
  static itt_global global{};
  global.api_list_ptr = list;
  api_init(&global, -1);
  return true;
}
