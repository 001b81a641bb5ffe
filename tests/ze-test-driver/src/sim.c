/*
 * The part of the test driver that the Unified Runtime's Level Zero adapter
 * needs beyond timestamps: driver and device properties, memory, command
 * queues, command lists (immediate and regular), fences and the host side of
 * events. Written in C against the loader's own headers (Debian libze-dev,
 * <level_zero/ze_ddi.h>), so that every descriptor and table has the layout
 * the loader expects.
 *
 * Everything runs on the host, at once: "device" memory is host memory, a
 * copy is memcpy, a fill repeats its pattern, an immediate command list runs
 * each command as it is appended, a regular one when a queue executes it.
 * Every command that signals an event gets device times from the Rust side
 * (ztd_next_command_times: the script's `command` statements, or a steady
 * default), so a test knows every timestamp in advance.
 *
 * Events, the script and the device clock live in lib.rs; the functions
 * declared below are the Rust side's exports.
 */
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lib.rs */
extern void ztd_event_signal(ze_event_handle_t event, uint64_t start, uint64_t end);
extern void ztd_event_reset(ze_event_handle_t event);
extern void ztd_next_command_times(uint32_t kind, uint64_t *start, uint64_t *end);
extern uint64_t ztd_device_now(void);
extern int ztd_log_enabled(void);

#define LOG(...)                                                              \
    do {                                                                      \
        if (ztd_log_enabled())                                                \
            fprintf(stderr, "ze-test-driver: " __VA_ARGS__);                  \
    } while (0)

/* What a command does; the kind is passed to ztd_next_command_times. */
enum op_kind { OP_COPY = 0, OP_FILL = 1, OP_BARRIER = 2, OP_SIGNAL = 3, OP_WAIT = 4,
               OP_RESET = 5, OP_WRITE_TIMESTAMP = 6, OP_QUERY_TIMESTAMPS = 7 };

typedef struct op {
    enum op_kind kind;
    void *dst;
    const void *src;
    size_t size;
    unsigned char pattern[128];
    size_t pattern_size;
    ze_event_handle_t signal;
    uint32_t count;              /* events of OP_RESET / OP_QUERY_TIMESTAMPS */
    ze_event_handle_t *events;
} op;

typedef struct command_list {
    int immediate;
    op *ops;
    size_t len, cap;
} command_list;

typedef struct command_queue {
    uint32_t ordinal;
} command_queue;

typedef struct fence {
    int signalled;
} fence;

typedef struct allocation {
    struct allocation *next;
    char *base;
    size_t size;
    ze_memory_type_t type;
    uint64_t id;
} allocation;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static allocation *allocations;
static uint64_t next_allocation_id = 1;

/* ------------------------------------------------------------------------ */
/* Running commands                                                         */
/* ------------------------------------------------------------------------ */

static void run_op(const op *o) {
    uint64_t start = 0, end = 0;
    switch (o->kind) {
    case OP_COPY:
        if (o->size)
            memmove(o->dst, o->src, o->size);
        break;
    case OP_FILL:
        for (size_t i = 0; i < o->size; i += o->pattern_size) {
            size_t n = o->size - i < o->pattern_size ? o->size - i : o->pattern_size;
            memcpy((char *)o->dst + i, o->pattern, n);
        }
        break;
    case OP_RESET:
        for (uint32_t i = 0; i < o->count; i++)
            ztd_event_reset(o->events[i]);
        break;
    case OP_WRITE_TIMESTAMP: {
        uint64_t now = ztd_device_now();
        memcpy(o->dst, &now, sizeof now);
        break;
    }
    case OP_QUERY_TIMESTAMPS:
        /* the Rust side answers zeEventQueryKernelTimestamp */
        for (uint32_t i = 0; i < o->count; i++) {
            ze_kernel_timestamp_result_t r;
            memset(&r, 0, sizeof r);
            extern ze_result_t ztd_event_times(ze_event_handle_t, ze_kernel_timestamp_result_t *);
            ztd_event_times(o->events[i], &r);
            memcpy((char *)o->dst + i * sizeof r, &r, sizeof r);
        }
        break;
    case OP_BARRIER:
    case OP_SIGNAL:
    case OP_WAIT:
        break;
    }
    if (o->signal) {
        ztd_next_command_times((uint32_t)o->kind, &start, &end);
        ztd_event_signal(o->signal, start, end);
    }
}

static ze_result_t append(ze_command_list_handle_t h, op o, uint32_t nwait) {
    (void)nwait; /* everything before has already run: waits are satisfied */
    command_list *list = (command_list *)h;
    if (!list)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    pthread_mutex_lock(&lock);
    if (list->immediate) {
        run_op(&o);
        free(o.events);
        pthread_mutex_unlock(&lock);
        return ZE_RESULT_SUCCESS;
    }
    if (list->len == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 16;
        op *ops = realloc(list->ops, cap * sizeof *ops);
        if (!ops) {
            pthread_mutex_unlock(&lock);
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        list->ops = ops;
        list->cap = cap;
    }
    list->ops[list->len++] = o;
    pthread_mutex_unlock(&lock);
    return ZE_RESULT_SUCCESS;
}

static void clear(command_list *list) {
    for (size_t i = 0; i < list->len; i++)
        free(list->ops[i].events);
    list->len = 0;
}

static ze_event_handle_t *copy_events(uint32_t n, const ze_event_handle_t *events) {
    if (!n || !events)
        return NULL;
    ze_event_handle_t *copy = malloc(n * sizeof *copy);
    if (copy)
        memcpy(copy, events, n * sizeof *copy);
    return copy;
}

/* The checks of a table getter; then the table is all nulls. */
static ze_result_t start_table(ze_api_version_t version, void *table, size_t size) {
    if (!table)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ZE_MAJOR_VERSION(version) != 1)
        return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    memset(table, 0, size);
    return ZE_RESULT_SUCCESS;
}

/* The `*pCount` / array protocol for a list of at most one entry: false when
 * the caller only asked how many (then `*result` is what to return), true
 * when `out[0]` is to be filled. */
static int one_entry(uint32_t *count, const void *out, ze_result_t *result) {
    *result = ZE_RESULT_SUCCESS;
    if (!count) {
        *result = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        return 0;
    }
    int fill = *count != 0 && out != NULL;
    *count = 1;
    return fill;
}

/* The `*pCount` protocol for a list with no entries. */
static ze_result_t no_entries(uint32_t *count) {
    if (!count)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *count = 0;
    return ZE_RESULT_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Driver                                                                   */
/* ------------------------------------------------------------------------ */

static ze_result_t driver_get_api_version(ze_driver_handle_t d, ze_api_version_t *v) {
    (void)d;
    if (!v)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *v = ZE_API_VERSION_1_4;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t driver_get_properties(ze_driver_handle_t d, ze_driver_properties_t *p) {
    (void)d;
    if (!p)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    memset(p->uuid.id, 0, sizeof p->uuid.id);
    memcpy(p->uuid.id, "syclgraph-drv", 13);
    p->driverVersion = 0x01000001;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t driver_get_ipc_properties(ze_driver_handle_t d, ze_driver_ipc_properties_t *p) {
    (void)d;
    if (!p)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->flags = 0;
    return ZE_RESULT_SUCCESS;
}

/* The mutable command list extension (1.1), which the adapter needs before
 * it lets a program finalise an updatable graph. Its functions are looked up
 * by name; commands are given ids and updates are accepted (the driver runs
 * no kernels, so there is nothing in them to change). */
#define MUTABLE_COMMAND_LIST_NAME "ZE_experimental_mutable_command_list"

static uint64_t next_command_id = 1;

static ze_result_t get_next_command_id(ze_command_list_handle_t list, const void *desc,
                                       uint64_t *id) {
    (void)list;
    (void)desc;
    if (!id)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    pthread_mutex_lock(&lock);
    *id = next_command_id++;
    pthread_mutex_unlock(&lock);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t get_next_command_id_with_kernels(ze_command_list_handle_t list,
                                                    const void *desc, uint32_t n,
                                                    void *kernels, uint64_t *id) {
    (void)n;
    (void)kernels;
    return get_next_command_id(list, desc, id);
}

static ze_result_t accept_update(void) {
    LOG("mutable command list update\n");
    return ZE_RESULT_SUCCESS;
}

static const struct {
    const char *name;
    void *function;
} extension_functions[] = {
    {"zeCommandListGetNextCommandIdExp", (void *)get_next_command_id},
    {"zeCommandListGetNextCommandIdWithKernelsExp", (void *)get_next_command_id_with_kernels},
    {"zeCommandListUpdateMutableCommandsExp", (void *)accept_update},
    {"zeCommandListUpdateMutableCommandSignalEventExp", (void *)accept_update},
    {"zeCommandListUpdateMutableCommandWaitEventsExp", (void *)accept_update},
    {"zeCommandListUpdateMutableCommandKernelsExp", (void *)accept_update},
};

static ze_result_t driver_get_extension_properties(ze_driver_handle_t d, uint32_t *count,
                                                   ze_driver_extension_properties_t *p) {
    (void)d;
    ze_result_t result;
    if (!one_entry(count, p, &result))
        return result;
    memset(p[0].name, 0, sizeof p[0].name);
    strcpy(p[0].name, MUTABLE_COMMAND_LIST_NAME);
    p[0].version = ZE_MAKE_VERSION(1, 1);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t driver_get_extension_function_address(ze_driver_handle_t d, const char *name,
                                                         void **out) {
    (void)d;
    if (!name || !out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (size_t i = 0; i < sizeof extension_functions / sizeof *extension_functions; i++) {
        if (strcmp(name, extension_functions[i].name) == 0) {
            *out = extension_functions[i].function;
            return ZE_RESULT_SUCCESS;
        }
    }
    LOG("no extension function %s\n", name);
    *out = NULL;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

void ztd_fill_driver(ze_driver_dditable_t *t) {
    t->pfnGetApiVersion = driver_get_api_version;
    t->pfnGetProperties = driver_get_properties;
    t->pfnGetIpcProperties = driver_get_ipc_properties;
    t->pfnGetExtensionProperties = driver_get_extension_properties;
    t->pfnGetExtensionFunctionAddress = driver_get_extension_function_address;
}

/* ------------------------------------------------------------------------ */
/* Device                                                                   */
/* ------------------------------------------------------------------------ */

static ze_result_t device_get_sub_devices(ze_device_handle_t d, uint32_t *count,
                                          ze_device_handle_t *subs) {
    (void)d;
    (void)subs;
    return no_entries(count);
}

static ze_result_t device_get_compute_properties(ze_device_handle_t d,
                                                 ze_device_compute_properties_t *p) {
    (void)d;
    if (!p)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->maxTotalGroupSize = 1024;
    p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
    p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 0xffffffffu;
    p->maxSharedLocalMemory = 65536;
    p->numSubGroupSizes = 1;
    memset(p->subGroupSizes, 0, sizeof p->subGroupSizes);
    p->subGroupSizes[0] = 16;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t device_get_module_properties(ze_device_handle_t d,
                                                ze_device_module_properties_t *p) {
    (void)d;
    if (!p)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
    p->flags = 0;
    p->fp16flags = 0;
    p->fp32flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_FMA;
    p->fp64flags = 0;
    p->maxArgumentsSize = 2048;
    p->printfBufferSize = 4 << 20;
    memset(&p->nativeKernelSupported, 0, sizeof p->nativeKernelSupported);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t device_get_command_queue_group_properties(
    ze_device_handle_t d, uint32_t *count, ze_command_queue_group_properties_t *p) {
    (void)d;
    ze_result_t result;
    if (!one_entry(count, p, &result))
        return result;
    p[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                 ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    p[0].maxMemoryFillPatternSize = 128;
    p[0].numQueues = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t device_get_memory_properties(ze_device_handle_t d, uint32_t *count,
                                                ze_device_memory_properties_t *p) {
    (void)d;
    ze_result_t result;
    if (!one_entry(count, p, &result))
        return result;
    p[0].flags = 0;
    p[0].maxClockRate = 1000;
    p[0].maxBusWidth = 64;
    p[0].totalSize = 1ull << 30;
    memset(p[0].name, 0, sizeof p[0].name);
    strcpy(p[0].name, "HBM");
    return ZE_RESULT_SUCCESS;
}

static ze_result_t device_get_memory_access_properties(ze_device_handle_t d,
                                                       ze_device_memory_access_properties_t *p) {
    (void)d;
    if (!p)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    ze_memory_access_cap_flags_t rw = ZE_MEMORY_ACCESS_CAP_FLAG_RW;
    p->hostAllocCapabilities = rw;
    p->deviceAllocCapabilities = rw;
    p->sharedSingleDeviceAllocCapabilities = rw;
    p->sharedCrossDeviceAllocCapabilities = 0;
    p->sharedSystemAllocCapabilities = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t device_get_cache_properties(ze_device_handle_t d, uint32_t *count,
                                               ze_device_cache_properties_t *p) {
    (void)d;
    (void)p;
    return no_entries(count);
}

static ze_result_t device_get_image_properties(ze_device_handle_t d,
                                               ze_device_image_properties_t *p) {
    (void)d;
    if (!p)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->maxImageDims1D = p->maxImageDims2D = p->maxImageDims3D = 0;
    p->maxImageBufferSize = 0;
    p->maxImageArraySlices = 0;
    p->maxSamplers = 0;
    p->maxReadImageArgs = p->maxWriteImageArgs = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t device_get_external_memory_properties(
    ze_device_handle_t d, ze_device_external_memory_properties_t *p) {
    (void)d;
    if (!p)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->memoryAllocationImportTypes = 0;
    p->memoryAllocationExportTypes = 0;
    p->imageImportTypes = 0;
    p->imageExportTypes = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t device_get_p2p_properties(ze_device_handle_t a, ze_device_handle_t b,
                                             ze_device_p2p_properties_t *p) {
    (void)a;
    (void)b;
    if (!p)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->flags = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t device_can_access_peer(ze_device_handle_t a, ze_device_handle_t b,
                                          ze_bool_t *out) {
    if (!out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *out = a == b;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t device_get_status(ze_device_handle_t d) {
    (void)d;
    return ZE_RESULT_SUCCESS;
}

void ztd_fill_device(ze_device_dditable_t *t) {
    t->pfnGetSubDevices = device_get_sub_devices;
    t->pfnGetComputeProperties = device_get_compute_properties;
    t->pfnGetModuleProperties = device_get_module_properties;
    t->pfnGetCommandQueueGroupProperties = device_get_command_queue_group_properties;
    t->pfnGetMemoryProperties = device_get_memory_properties;
    t->pfnGetMemoryAccessProperties = device_get_memory_access_properties;
    t->pfnGetCacheProperties = device_get_cache_properties;
    t->pfnGetImageProperties = device_get_image_properties;
    t->pfnGetExternalMemoryProperties = device_get_external_memory_properties;
    t->pfnGetP2PProperties = device_get_p2p_properties;
    t->pfnCanAccessPeer = device_can_access_peer;
    t->pfnGetStatus = device_get_status;
}

/* ------------------------------------------------------------------------ */
/* Context                                                                  */
/* ------------------------------------------------------------------------ */

static ze_result_t context_get_status(ze_context_handle_t c) {
    return c ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

static ze_result_t context_system_barrier(ze_context_handle_t c, ze_device_handle_t d) {
    (void)c;
    (void)d;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t context_make_memory_resident(ze_context_handle_t c, ze_device_handle_t d,
                                                void *ptr, size_t size) {
    (void)c;
    (void)d;
    (void)ptr;
    (void)size;
    return ZE_RESULT_SUCCESS;
}

void ztd_fill_context(ze_context_dditable_t *t) {
    t->pfnGetStatus = context_get_status;
    t->pfnSystemBarrier = context_system_barrier;
    t->pfnMakeMemoryResident = context_make_memory_resident;
    t->pfnEvictMemory = context_make_memory_resident;
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

static ze_result_t mem_alloc(ze_memory_type_t type, size_t size, size_t alignment, void **out) {
    if (!out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0)
        return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (alignment < 64)
        alignment = 64;
    if (alignment & (alignment - 1))
        return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    size_t rounded = (size + alignment - 1) / alignment * alignment;
    void *base = aligned_alloc(alignment, rounded);
    allocation *a = malloc(sizeof *a);
    if (!base || !a) {
        free(base);
        free(a);
        return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    memset(base, 0, rounded);
    pthread_mutex_lock(&lock);
    a->base = base;
    a->size = size;
    a->type = type;
    a->id = next_allocation_id++;
    a->next = allocations;
    allocations = a;
    pthread_mutex_unlock(&lock);
    *out = base;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t mem_alloc_shared(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *dd,
                                    const ze_host_mem_alloc_desc_t *hd, size_t size,
                                    size_t alignment, ze_device_handle_t d, void **out) {
    (void)c;
    (void)dd;
    (void)hd;
    (void)d;
    return mem_alloc(ZE_MEMORY_TYPE_SHARED, size, alignment, out);
}

static ze_result_t mem_alloc_device(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *dd,
                                    size_t size, size_t alignment, ze_device_handle_t d,
                                    void **out) {
    (void)c;
    (void)dd;
    (void)d;
    return mem_alloc(ZE_MEMORY_TYPE_DEVICE, size, alignment, out);
}

static ze_result_t mem_alloc_host(ze_context_handle_t c, const ze_host_mem_alloc_desc_t *hd,
                                  size_t size, size_t alignment, void **out) {
    (void)c;
    (void)hd;
    return mem_alloc(ZE_MEMORY_TYPE_HOST, size, alignment, out);
}

/* The allocation holding `ptr`, under the lock. */
static allocation *find(const void *ptr) {
    for (allocation *a = allocations; a; a = a->next)
        if ((const char *)ptr >= a->base && (const char *)ptr < a->base + a->size)
            return a;
    return NULL;
}

static ze_result_t mem_free(ze_context_handle_t c, void *ptr) {
    (void)c;
    pthread_mutex_lock(&lock);
    allocation **link = &allocations;
    while (*link && (*link)->base != ptr)
        link = &(*link)->next;
    allocation *a = *link;
    if (a)
        *link = a->next;
    pthread_mutex_unlock(&lock);
    if (!a)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    free(a->base);
    free(a);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t mem_free_ext(ze_context_handle_t c, const ze_memory_free_ext_desc_t *desc,
                                void *ptr) {
    (void)desc;
    return mem_free(c, ptr);
}

extern ze_device_handle_t ztd_device_handle(void);

static ze_result_t mem_get_alloc_properties(ze_context_handle_t c, const void *ptr,
                                            ze_memory_allocation_properties_t *p,
                                            ze_device_handle_t *device) {
    (void)c;
    if (!p)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    pthread_mutex_lock(&lock);
    allocation *a = find(ptr);
    p->type = a ? a->type : ZE_MEMORY_TYPE_UNKNOWN;
    p->id = a ? a->id : 0;
    p->pageSize = a ? 4096 : 0;
    pthread_mutex_unlock(&lock);
    if (device)
        *device = a && a->type != ZE_MEMORY_TYPE_HOST ? ztd_device_handle() : NULL;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t mem_get_address_range(ze_context_handle_t c, const void *ptr, void **base,
                                         size_t *size) {
    (void)c;
    pthread_mutex_lock(&lock);
    allocation *a = find(ptr);
    pthread_mutex_unlock(&lock);
    if (!a)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (base)
        *base = a->base;
    if (size)
        *size = a->size;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ztd_mem_table(ze_api_version_t version, ze_mem_dditable_t *t) {
    ze_result_t checked = start_table(version, t, sizeof *t);
    if (checked != ZE_RESULT_SUCCESS)
        return checked;
    t->pfnAllocShared = mem_alloc_shared;
    t->pfnAllocDevice = mem_alloc_device;
    t->pfnAllocHost = mem_alloc_host;
    t->pfnFree = mem_free;
    t->pfnGetAllocProperties = mem_get_alloc_properties;
    t->pfnGetAddressRange = mem_get_address_range;
    t->pfnFreeExt = mem_free_ext;
    return ZE_RESULT_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Command queues and fences                                                */
/* ------------------------------------------------------------------------ */

static ze_result_t queue_create(ze_context_handle_t c, ze_device_handle_t d,
                                const ze_command_queue_desc_t *desc,
                                ze_command_queue_handle_t *out) {
    (void)c;
    (void)d;
    if (!desc || !out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    command_queue *q = calloc(1, sizeof *q);
    if (!q)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    q->ordinal = desc->ordinal;
    *out = (ze_command_queue_handle_t)q;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t queue_destroy(ze_command_queue_handle_t q) {
    free(q);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t queue_execute(ze_command_queue_handle_t q, uint32_t n,
                                 ze_command_list_handle_t *lists, ze_fence_handle_t f) {
    if (!q)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n; i++) {
        command_list *list = (command_list *)lists[i];
        for (size_t k = 0; k < list->len; k++)
            run_op(&list->ops[k]);
    }
    if (f)
        ((fence *)f)->signalled = 1;
    pthread_mutex_unlock(&lock);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t queue_synchronize(ze_command_queue_handle_t q, uint64_t timeout) {
    (void)q;
    (void)timeout;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ztd_command_queue_table(ze_api_version_t version,
                                                      ze_command_queue_dditable_t *t) {
    ze_result_t checked = start_table(version, t, sizeof *t);
    if (checked != ZE_RESULT_SUCCESS)
        return checked;
    t->pfnCreate = queue_create;
    t->pfnDestroy = queue_destroy;
    t->pfnExecuteCommandLists = queue_execute;
    t->pfnSynchronize = queue_synchronize;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fence_create(ze_command_queue_handle_t q, const ze_fence_desc_t *desc,
                                ze_fence_handle_t *out) {
    (void)q;
    if (!desc || !out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    fence *f = calloc(1, sizeof *f);
    if (!f)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    f->signalled = (desc->flags & ZE_FENCE_FLAG_SIGNALED) != 0;
    *out = (ze_fence_handle_t)f;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fence_destroy(ze_fence_handle_t f) {
    free(f);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t fence_host_synchronize(ze_fence_handle_t f, uint64_t timeout) {
    (void)timeout;
    if (!f)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return ZE_RESULT_SUCCESS; /* every execution has finished when it returns */
}

static ze_result_t fence_query_status(ze_fence_handle_t f) {
    if (!f)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return ((fence *)f)->signalled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t fence_reset(ze_fence_handle_t f) {
    if (!f)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    ((fence *)f)->signalled = 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ztd_fence_table(ze_api_version_t version, ze_fence_dditable_t *t) {
    ze_result_t checked = start_table(version, t, sizeof *t);
    if (checked != ZE_RESULT_SUCCESS)
        return checked;
    t->pfnCreate = fence_create;
    t->pfnDestroy = fence_destroy;
    t->pfnHostSynchronize = fence_host_synchronize;
    t->pfnQueryStatus = fence_query_status;
    t->pfnReset = fence_reset;
    return ZE_RESULT_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Command lists                                                            */
/* ------------------------------------------------------------------------ */

/* A new command list, immediate or regular. */
static ze_result_t new_list(int immediate, const void *desc, ze_command_list_handle_t *out) {
    if (!desc || !out)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    command_list *list = calloc(1, sizeof *list);
    if (!list)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    list->immediate = immediate;
    *out = (ze_command_list_handle_t)list;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t list_create(ze_context_handle_t c, ze_device_handle_t d,
                               const ze_command_list_desc_t *desc, ze_command_list_handle_t *out) {
    (void)c;
    (void)d;
    return new_list(0, desc, out);
}

static ze_result_t list_create_immediate(ze_context_handle_t c, ze_device_handle_t d,
                                         const ze_command_queue_desc_t *desc,
                                         ze_command_list_handle_t *out) {
    (void)c;
    (void)d;
    return new_list(1, desc, out);
}

static ze_result_t list_destroy(ze_command_list_handle_t h) {
    command_list *list = (command_list *)h;
    if (!list)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    clear(list);
    free(list->ops);
    free(list);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t list_close(ze_command_list_handle_t h) {
    return h ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

static ze_result_t list_reset(ze_command_list_handle_t h) {
    if (!h)
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    pthread_mutex_lock(&lock);
    clear((command_list *)h);
    pthread_mutex_unlock(&lock);
    return ZE_RESULT_SUCCESS;
}

static op new_op(enum op_kind kind, ze_event_handle_t signal) {
    op o;
    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.signal = signal;
    return o;
}

static ze_result_t list_append_write_global_timestamp(ze_command_list_handle_t h, uint64_t *dst,
                                                      ze_event_handle_t signal, uint32_t nwait,
                                                      ze_event_handle_t *waits) {
    (void)waits;
    op o = new_op(OP_WRITE_TIMESTAMP, signal);
    o.dst = dst;
    return append(h, o, nwait);
}

static ze_result_t list_append_barrier(ze_command_list_handle_t h, ze_event_handle_t signal,
                                       uint32_t nwait, ze_event_handle_t *waits) {
    (void)waits;
    return append(h, new_op(OP_BARRIER, signal), nwait);
}

static ze_result_t list_append_memory_ranges_barrier(ze_command_list_handle_t h, uint32_t n,
                                                     const size_t *sizes, const void **ranges,
                                                     ze_event_handle_t signal, uint32_t nwait,
                                                     ze_event_handle_t *waits) {
    (void)n;
    (void)sizes;
    (void)ranges;
    (void)waits;
    return append(h, new_op(OP_BARRIER, signal), nwait);
}

static ze_result_t list_append_memory_copy(ze_command_list_handle_t h, void *dst, const void *src,
                                           size_t size, ze_event_handle_t signal, uint32_t nwait,
                                           ze_event_handle_t *waits) {
    (void)waits;
    if ((!dst || !src) && size)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    op o = new_op(OP_COPY, signal);
    o.dst = dst;
    o.src = src;
    o.size = size;
    return append(h, o, nwait);
}

static ze_result_t list_append_memory_fill(ze_command_list_handle_t h, void *dst,
                                           const void *pattern, size_t pattern_size, size_t size,
                                           ze_event_handle_t signal, uint32_t nwait,
                                           ze_event_handle_t *waits) {
    (void)waits;
    if (!dst || !pattern)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (pattern_size == 0 || pattern_size > sizeof(((op *)0)->pattern))
        return ZE_RESULT_ERROR_INVALID_SIZE;
    op o = new_op(OP_FILL, signal);
    o.dst = dst;
    o.size = size;
    memcpy(o.pattern, pattern, pattern_size);
    o.pattern_size = pattern_size;
    return append(h, o, nwait);
}

static ze_result_t list_append_memory_prefetch(ze_command_list_handle_t h, const void *ptr,
                                               size_t size) {
    (void)h;
    (void)ptr;
    (void)size;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t list_append_mem_advise(ze_command_list_handle_t h, ze_device_handle_t d,
                                          const void *ptr, size_t size, ze_memory_advice_t a) {
    (void)h;
    (void)d;
    (void)ptr;
    (void)size;
    (void)a;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t list_append_signal_event(ze_command_list_handle_t h, ze_event_handle_t e) {
    return append(h, new_op(OP_SIGNAL, e), 0);
}

static ze_result_t list_append_wait_on_events(ze_command_list_handle_t h, uint32_t n,
                                              ze_event_handle_t *events) {
    (void)events;
    return append(h, new_op(OP_WAIT, NULL), n);
}

static ze_result_t list_append_event_reset(ze_command_list_handle_t h, ze_event_handle_t e) {
    op o = new_op(OP_RESET, NULL);
    o.count = 1;
    o.events = copy_events(1, &e);
    return append(h, o, 0);
}

static ze_result_t list_append_query_kernel_timestamps(ze_command_list_handle_t h, uint32_t n,
                                                       ze_event_handle_t *events, void *dst,
                                                       const size_t *offsets,
                                                       ze_event_handle_t signal, uint32_t nwait,
                                                       ze_event_handle_t *waits) {
    (void)waits;
    if (offsets)
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    op o = new_op(OP_QUERY_TIMESTAMPS, signal);
    o.dst = dst;
    o.count = n;
    o.events = copy_events(n, events);
    return append(h, o, nwait);
}

ze_result_t ztd_command_list_table(ze_api_version_t version,
                                                     ze_command_list_dditable_t *t) {
    ze_result_t checked = start_table(version, t, sizeof *t);
    if (checked != ZE_RESULT_SUCCESS)
        return checked;
    t->pfnCreate = list_create;
    t->pfnCreateImmediate = list_create_immediate;
    t->pfnDestroy = list_destroy;
    t->pfnClose = list_close;
    t->pfnReset = list_reset;
    t->pfnAppendWriteGlobalTimestamp = list_append_write_global_timestamp;
    t->pfnAppendBarrier = list_append_barrier;
    t->pfnAppendMemoryRangesBarrier = list_append_memory_ranges_barrier;
    t->pfnAppendMemoryCopy = list_append_memory_copy;
    t->pfnAppendMemoryFill = list_append_memory_fill;
    t->pfnAppendMemoryPrefetch = list_append_memory_prefetch;
    t->pfnAppendMemAdvise = list_append_mem_advise;
    t->pfnAppendSignalEvent = list_append_signal_event;
    t->pfnAppendWaitOnEvents = list_append_wait_on_events;
    t->pfnAppendEventReset = list_append_event_reset;
    t->pfnAppendQueryKernelTimestamps = list_append_query_kernel_timestamps;
    return ZE_RESULT_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Events: the host side                                                    */
/* ------------------------------------------------------------------------ */

extern ze_result_t ztd_event_status(ze_event_handle_t);

static ze_result_t event_host_signal(ze_event_handle_t e) {
    uint64_t now = ztd_device_now();
    ztd_event_signal(e, now, now);
    return e ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

/* Everything runs when it is appended or executed: an event that is not
 * signalled now never will be by a command already submitted. */
static ze_result_t event_host_synchronize(ze_event_handle_t e, uint64_t timeout) {
    (void)timeout;
    return ztd_event_status(e);
}

static ze_result_t event_host_reset(ze_event_handle_t e) {
    ztd_event_reset(e);
    return e ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

void ztd_fill_event(ze_event_dditable_t *t) {
    t->pfnHostSignal = event_host_signal;
    t->pfnHostSynchronize = event_host_synchronize;
    t->pfnHostReset = event_host_reset;
}

/* ------------------------------------------------------------------------ */
/* Device property extensions                                               */
/* ------------------------------------------------------------------------ */

/* ze_mutable_command_list_exp_properties_t (API 1.9; Debian's 1.4 headers
 * do not have it). */
#define STYPE_MUTABLE_COMMAND_LIST_EXP_PROPERTIES 0x00020015u
typedef struct {
    ze_structure_type_t stype;
    void *pNext;
    uint32_t mutableCommandListFlags;
    uint32_t mutableCommandFlags;
} mutable_command_list_properties;

/* Fills the extension structures of zeDeviceGetProperties' pNext chain that
 * this driver knows: the mutable command list's (every command flag). */
void ztd_device_property_extensions(void *next) {
    for (int depth = 0; next && depth < 32; depth++) {
        ze_base_properties_t *base = next;
        if ((uint32_t)base->stype == STYPE_MUTABLE_COMMAND_LIST_EXP_PROPERTIES) {
            mutable_command_list_properties *m = next;
            m->mutableCommandListFlags = 0;
            m->mutableCommandFlags = 0xff;
        }
        next = base->pNext;
    }
}
