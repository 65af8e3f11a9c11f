#include "HeapMeter.h"

#include <sanitizer/allocator_interface.h>
#include <stddef.h>

static int installed;
static int counting;
/* Signed: a block allocated before the measurement may be freed inside it. */
static long live;
static long peak;

static void on_malloc(const volatile void *pointer, size_t size) {
    (void)pointer;
    if (!counting) return;
    live += (long)size;
    if (live > peak) peak = live;
}

/* Runs before the block is released, so its size can still be asked for. */
static void on_free(const volatile void *pointer) {
    if (!counting || pointer == NULL) return;
    live -= (long)__sanitizer_get_allocated_size((const void *)pointer);
}

void fuzz_heap_begin(void) {
    if (!installed) {
        __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
        installed = 1;
    }
    live = 0;
    peak = 0;
    counting = 1;
}

long fuzz_heap_end(void) {
    counting = 0;
    return peak;
}
