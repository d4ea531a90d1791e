#include "base/memory.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace referee::base {

namespace {

constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;

// Asks for huge pages over the whole 2 MiB blocks in [lo, hi).
void advise_huge(void* lo, void* hi) {
#ifdef MADV_HUGEPAGE
  auto a = (reinterpret_cast<std::uintptr_t>(lo) + kHuge - 1) & ~(kHuge - 1);
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
  mallopt(M_TOP_PAD, 64 << 20);
  // Grow the heap once now (a block larger than what is left at its top makes
  // glibc extend it by the block and the pad) and advise the new space.
  void* before = sbrk(0);
  void* volatile p = std::malloc(512 << 10);  // volatile: the pair is not optimised away
  void* after = sbrk(0);
  std::free(p);
  if (before == reinterpret_cast<void*>(-1) || after == reinterpret_cast<void*>(-1) || after <= before) return;
  advise_huge(before, after);
  // What the heap hands out next starts at its top, which is rarely on a
  // 2 MiB boundary; the space up to the boundary can only have 4 KiB pages.
  // A block over that space, kept for the life of the process and never
  // written, moves what comes next onto huge pages; it costs address space,
  // not memory.
  static void* volatile filler = nullptr;  // volatile: kept, not optimised away
  char* top = static_cast<char*>(std::malloc(64));
  auto t = reinterpret_cast<std::uintptr_t>(top) + 64;
  auto boundary = (t + kHuge - 1) & ~(kHuge - 1);
  if (boundary - t > 4096) filler = std::malloc(boundary - t - 64);
  std::free(top);
  (void)filler;
}

void* map_buffer(std::size_t size) {
  // Mapped 2 MiB larger and trimmed to a 2 MiB boundary: huge pages need
  // blocks aligned to their size.
  std::size_t span = size + kHuge;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto lo = reinterpret_cast<std::uintptr_t>(p);
  auto start = (lo + kHuge - 1) & ~(kHuge - 1);
  std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::size_t len = (size + page - 1) & ~(page - 1);
  if (start > lo) munmap(p, start - lo);
  if (lo + span > start + len) munmap(reinterpret_cast<void*>(start + len), lo + span - (start + len));
  advise_huge(reinterpret_cast<void*>(start), reinterpret_cast<void*>(start + len));
  return reinterpret_cast<void*>(start);
}

void free_buffer(void* p, std::size_t size) {
  if (!p) return;
  std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  munmap(p, (size + page - 1) & ~(page - 1));
}

}  // namespace referee::base
