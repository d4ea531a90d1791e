#include "base/memory.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace referee::base {

namespace {

constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;

// x rounded up to a multiple of `to` (a power of two).
std::uintptr_t align_up(std::uintptr_t x, std::uintptr_t to) { return (x + to - 1) & ~(to - 1); }

std::size_t whole_pages(std::size_t size) {
  return align_up(size, static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE)));
}

// Asks for huge pages over the whole 2 MiB blocks in [lo, hi).
void advise_huge(void* lo, void* hi) {
#ifdef MADV_HUGEPAGE
  auto a = align_up(reinterpret_cast<std::uintptr_t>(lo), kHuge);
  auto b = reinterpret_cast<std::uintptr_t>(hi) & ~(kHuge - 1);
  if (b > a) madvise(reinterpret_cast<void*>(a), b - a, MADV_HUGEPAGE);  // advice: refusal is harmless
#else
  (void)lo;
  (void)hi;
#endif
}

}  // namespace

void tune_allocator() {
  // Memory freed after one file is reused by the next: glibc otherwise trims
  // the heap whenever 128 KiB lie free at its top, and maps and unmaps every
  // large block.
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  // Under a limit on address space (ulimit -v) the heap grows as glibc
  // would grow it: reserving 64 MiB at a time could fail where the work fits.
  struct rlimit as {};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) return;
  mallopt(M_TOP_PAD, 64 << 20);
  // Grow the heap once now (a block larger than what is left at its top makes
  // glibc extend it by the block and the pad) and advise the new space.
  void* before = sbrk(0);
  void* volatile p = std::malloc(512 << 10);  // volatile: the pair is not optimised away
  void* after = sbrk(0);
  std::free(p);
  if (before == reinterpret_cast<void*>(-1) || after == reinterpret_cast<void*>(-1) || after <= before) return;
  advise_huge(before, after);
  // What the heap hands out next starts at its top chunk (which ends at the
  // break; glibc reports its size as keepcost), rarely on a 2 MiB boundary;
  // the space up to the boundary can only have 4 KiB pages. A block over that
  // space, kept for the life of the process and never written, moves what
  // comes next onto huge pages; it costs address space, not memory.
  static void* volatile filler = nullptr;  // volatile: kept, not optimised away
  struct mallinfo2 info = mallinfo2();
  auto brk_now = reinterpret_cast<std::uintptr_t>(sbrk(0));
  auto top = brk_now - info.keepcost;
  auto boundary = align_up(top, kHuge);
  if (info.keepcost > 0 && boundary < brk_now && boundary - top > 4096) filler = std::malloc(boundary - top - 16);
  (void)filler;
#ifdef MADV_POPULATE_WRITE
  // The first huge block is taken now, in one go: every command uses it, and
  // a first touch that reads (glibc looking at a chunk's neighbour) would
  // otherwise map it in 4 KiB pages. A kernel before 5.14 refuses the advice.
  if (boundary + kHuge <= brk_now) madvise(reinterpret_cast<void*>(boundary), kHuge, MADV_POPULATE_WRITE);
#endif
}

void tune_thread_heap() {
  // glibc's heaps of other arenas are 64 MiB reservations aligned to their
  // size (HEAP_MAX_SIZE on 64-bit systems); the thread's first block lies in
  // its arena's heap.
  constexpr std::uintptr_t kArenaHeap = std::uintptr_t{64} << 20;
  void* volatile p = std::malloc(64);  // volatile: not optimised away
  if (!p) return;
  auto at = reinterpret_cast<std::uintptr_t>(static_cast<void*>(p));
  std::free(p);
  auto brk_now = reinterpret_cast<std::uintptr_t>(sbrk(0));
  if (sizeof(void*) != 8 || at < brk_now + (std::uintptr_t{1} << 30)) return;  // the main heap (below the break), or unsure
  auto heap = at & ~(kArenaHeap - 1);
  if (madvise(reinterpret_cast<void*>(heap), kArenaHeap, MADV_HUGEPAGE) != 0) return;
  // The heap's first 2 MiB block was touched (glibc's header, that first
  // block) before the advice, so it would go on in 4 KiB pages, each a fault
  // when first written: the thread's first few thousand lines fault 500
  // times. Collapsed into one huge page now, in one call (Linux 6.1 and
  // later; an older kernel refuses the advice and nothing changes).
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
  madvise(reinterpret_cast<void*>(heap), kHuge, MADV_COLLAPSE);
  // An arena's heap is made writable only as far as it is used, so its last
  // 2 MiB block is never whole and takes 4 KiB pages. A large block taken
  // and given back (it is kept: the heap is not trimmed) makes most of it
  // writable at once; no page of it is touched.
  void* volatile big = std::malloc(std::size_t{48} << 20);
  std::free(big);
}

void* map_buffer(std::size_t size) {
  // Mapped 2 MiB larger and trimmed to a 2 MiB boundary: huge pages need
  // blocks aligned to their size.
  std::size_t span = size + kHuge;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto lo = reinterpret_cast<std::uintptr_t>(p);
  auto start = align_up(lo, kHuge);
  std::size_t len = whole_pages(size);
  if (start > lo) munmap(p, start - lo);
  if (lo + span > start + len) munmap(reinterpret_cast<void*>(start + len), lo + span - (start + len));
  advise_huge(reinterpret_cast<void*>(start), reinterpret_cast<void*>(start + len));
  return reinterpret_cast<void*>(start);
}

void free_buffer(void* p, std::size_t size) {
  if (p) munmap(p, whole_pages(size));
}

}  // namespace referee::base
