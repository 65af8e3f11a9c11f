/* Letting go of the pages of a program's code and read-only data, and its
   libraries', that start-up ran and serving does not. */
#include "csystem_private.h"
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct csystem_release {
    uintptr_t page_size;
    int measure_only; /* count the bytes, let go of nothing */
    long released;
    int failure; /* errno of the first madvise that failed, or 0 */
};

/* Whether the object's code is relocated in place (DT_TEXTREL, or
   DF_TEXTREL in DT_FLAGS): then its read-only segments hold written pages. */
static int csystem_has_text_relocations(const struct dl_phdr_info *info) {
    for (int index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type != PT_DYNAMIC) continue;
        for (const ElfW(Dyn) *entry = (const ElfW(Dyn) *)(info->dlpi_addr + header->p_vaddr);
             entry->d_tag != DT_NULL; entry++) {
            if (entry->d_tag == DT_TEXTREL) return 1;
            if (entry->d_tag == DT_FLAGS && (entry->d_un.d_val & DF_TEXTREL)) return 1;
        }
    }
    return 0;
}

/* Called by dl_iterate_phdr with the loader's lock held, so no object is
   mapped, added or unmapped meanwhile: every range let go here is an
   object's read-only segment, mapped from its file and not written by the
   loader. A debugger's or a uprobe's breakpoint in that code is a page
   written after all: it is let go of with the rest, and the probe stops
   firing (the Guard is not dumpable, so only root could have set one). */
static int csystem_release_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct csystem_release *release = data;
    /* The main program is named "", a library by its path; the vDSO
       ("linux-vdso.so.1") is the kernel's, not a file's. */
    if (info->dlpi_name[0] != '\0' && info->dlpi_name[0] != '/') return 0;
    if (csystem_has_text_relocations(info)) return 0;
    uintptr_t page = release->page_size;
    for (int index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type != PT_LOAD || (header->p_flags & PF_W) || header->p_memsz == 0) continue;
        /* The pages the loader mapped for the segment, less any page a
           writable segment's mapping shares (the later mapping wins it). */
        uintptr_t start = (info->dlpi_addr + header->p_vaddr) & ~(page - 1);
        uintptr_t end = (info->dlpi_addr + header->p_vaddr + header->p_memsz + page - 1) & ~(page - 1);
        /* A segment longer in memory than in its file had the page where the
           file's bytes end zeroed past them by the loader: that page and
           the rest are not the file's. */
        if (header->p_memsz > header->p_filesz)
            end = (info->dlpi_addr + header->p_vaddr + header->p_filesz) & ~(page - 1);
        for (int other = 0; other < info->dlpi_phnum; other++) {
            const ElfW(Phdr) *writable = &info->dlpi_phdr[other];
            if (writable->p_type != PT_LOAD || !(writable->p_flags & PF_W)) continue;
            uintptr_t from = (info->dlpi_addr + writable->p_vaddr) & ~(page - 1);
            uintptr_t to = (info->dlpi_addr + writable->p_vaddr + writable->p_memsz + page - 1) & ~(page - 1);
            if (from >= end || to <= start) continue;
            if (from <= start) start = to; else end = from;
        }
        if (end <= start) continue;
        if (release->measure_only) release->released += (long)(end - start);
        else if (madvise((void *)start, end - start, MADV_DONTNEED) == 0) release->released += (long)(end - start);
        else if (release->failure == 0) release->failure = errno;
    }
    return 0;
}

static long csystem_walk_loaded_code_pages(int measure_only) {
    long page_size = sysconf(_SC_PAGESIZE);
    if (page_size <= 0) return -1;
    struct csystem_release release = {(uintptr_t)page_size, measure_only, 0, 0};
    dl_iterate_phdr(csystem_release_object, &release);
    if (release.released == 0 && release.failure != 0) {
        errno = release.failure;
        return -1;
    }
    return release.released;
}

long csystem_release_loaded_code_pages(void) { return csystem_walk_loaded_code_pages(0); }

long csystem_loaded_code_pages_size(void) { return csystem_walk_loaded_code_pages(1); }
