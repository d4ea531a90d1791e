// How the process takes memory from the system. One place, called once at the
// start of `main`, because a page fault costs more than the work on the page
// on some machines (virtual machines where every fault exits to the host).
#pragma once

#include <cstddef>

namespace referee::base {

// Sets glibc's allocator up for a short process that reads a lot: memory freed
// is kept for reuse (no trimming of the heap, no map and unmap of large
// blocks), the heap grows in steps of 64 MiB of address space, and the kernel
// is asked to back that space with 2 MiB pages where it can (transparent huge
// pages in "madvise" mode): one fault where there would be 512. Pages are
// still taken only when first touched. Without transparent huge pages, or on
// a kernel that refuses the advice, only the first part holds; under a limit
// on address space (ulimit -v) the heap grows as glibc grows it.
void tune_allocator();

// Called first on a worker thread that allocates much: glibc gives such a
// thread a heap of its own (an arena, 64 MiB of address space), which is
// asked for 2 MiB pages as the main heap is. Nothing on the main thread.
void tune_thread_heap();

// Memory for a buffer of `size` bytes that is written soon after: mapped
// privately, backed by 2 MiB pages where the kernel allows. Freed with
// `free_buffer(p, size)`. Returns nullptr when the system has no memory.
void* map_buffer(std::size_t size);
void free_buffer(void* p, std::size_t size);

}  // namespace referee::base
