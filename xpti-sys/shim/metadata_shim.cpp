// The one piece of C++ in syclgraph: XPTI returns an event's metadata as a
// `std::unordered_map<string_id_t, object_id_t>`, which Rust cannot walk.
// This shim walks it and hands each (key, value) pair to a Rust visitor.
// It also pins the struct layouts xpti-sys declares: if the headers of the
// installed runtime disagree, the build fails here instead of misreading
// memory at run time.
#include <cstddef>
#include <cstdint>
#include <xpti/xpti_data_types.h>

static_assert(sizeof(xpti::payload_t) == 80, "payload_t layout changed");
static_assert(offsetof(xpti::payload_t, name) == 0, "payload_t::name");
static_assert(offsetof(xpti::payload_t, source_file) == 16, "payload_t::source_file");
static_assert(offsetof(xpti::payload_t, line_no) == 24, "payload_t::line_no");
static_assert(offsetof(xpti::payload_t, column_no) == 28, "payload_t::column_no");
static_assert(offsetof(xpti::payload_t, flags) == 48, "payload_t::flags");
static_assert(offsetof(xpti::trace_event_data_t, unique_id) == 0, "unique_id");
static_assert(offsetof(xpti::trace_event_data_t, instance_id) == 16, "instance_id");
static_assert(offsetof(xpti::trace_event_data_t, event_type) == 24, "event_type");
static_assert(offsetof(xpti::trace_event_data_t, source_id) == 32, "source_id");
static_assert(offsetof(xpti::trace_event_data_t, target_id) == 40, "target_id");
static_assert(offsetof(xpti::trace_event_data_t, reserved) == 48, "reserved");
static_assert(offsetof(xpti::reserved_data_t, payload) == 0, "reserved.payload");
static_assert(sizeof(xpti::object_data_t) == 24, "object_data_t layout changed");
static_assert(sizeof(xpti::function_with_args_t) == 40, "function_with_args_t");

extern "C" {

typedef const char *(*syclgraph_lookup_string_fn)(xpti::string_id_t);
typedef xpti::object_data_t (*syclgraph_lookup_object_fn)(xpti::object_id_t);
typedef void (*syclgraph_metadata_visitor)(void *ctx, const char *key,
                                           const char *value, size_t size,
                                           uint8_t type);

// Calls `visit` once per metadata pair of `md` (may be null). Returns the
// number of pairs visited. Never throws.
size_t syclgraph_visit_metadata(const void *md,
                                syclgraph_lookup_string_fn lookup_string,
                                syclgraph_lookup_object_fn lookup_object,
                                syclgraph_metadata_visitor visit, void *ctx) {
  if (md == nullptr || lookup_string == nullptr || lookup_object == nullptr ||
      visit == nullptr)
    return 0;
  const auto &map = *static_cast<const xpti::metadata_t *>(md);
  size_t visited = 0;
  for (const auto &pair : map) {
    const char *key = lookup_string(pair.first);
    xpti::object_data_t value = lookup_object(pair.second);
    visit(ctx, key, value.data, value.size, value.type);
    ++visited;
  }
  return visited;
}

// The size of `metadata_t` in the headers the shim was built with; the Rust
// side checks it against its own declaration of `trace_event_data_t`.
size_t syclgraph_metadata_size(void) { return sizeof(xpti::metadata_t); }

// The size of `trace_event_data_t` in the headers the shim was built with.
size_t syclgraph_trace_event_size(void) {
  return sizeof(xpti::trace_event_data_t);
}
}
