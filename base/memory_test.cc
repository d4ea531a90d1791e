#include "base/memory.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <thread>
#include <vector>

using namespace referee::base;

TEST_SUITE("base") {

TEST_CASE("map_buffer gives writable memory on a 2 MiB boundary, of any size") {
  for (std::size_t size : {std::size_t{1}, std::size_t{4096}, std::size_t{3} << 20, (std::size_t{2} << 20) + 1}) {
    void* p = map_buffer(size);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % (std::uintptr_t{2} << 20) == 0);
    std::memset(p, 0x5a, size);
    CHECK(static_cast<unsigned char*>(p)[size - 1] == 0x5a);
    free_buffer(p, size);
  }
  free_buffer(nullptr, 10);  // nothing to free is not an error
}

TEST_CASE("after tune_allocator the heap still hands out and takes back memory") {
  tune_allocator();
  tune_allocator();  // twice is harmless
  void* small = std::malloc(32);
  void* big = std::malloc(std::size_t{80} << 20);  // above the mapping threshold
  REQUIRE(small != nullptr);
  REQUIRE(big != nullptr);
  std::memset(big, 1, std::size_t{80} << 20);
  std::free(big);
  std::free(small);
}

TEST_CASE("a worker thread's heap, tuned, holds what is written to it") {
  // The first block of the thread's heap is collapsed into one page while
  // glibc's own data lies in it: that data, and what the thread writes after,
  // must come through unchanged.
  bool ok = false;
  std::thread worker([&ok] {
    void* before = std::malloc(1000);
    std::memset(before, 0x3c, 1000);
    tune_thread_heap();
    std::vector<void*> blocks;
    for (int i = 0; i < 4000; ++i) {  // about 4 MiB in blocks of 1 KiB: past the first block
      void* b = std::malloc(1024);
      if (!b) return;
      std::memset(b, i & 0xff, 1024);
      blocks.push_back(b);
    }
    ok = static_cast<unsigned char*>(before)[999] == 0x3c;
    for (int i = 0; i < 4000; ++i) {
      ok = ok && static_cast<unsigned char*>(blocks[i])[1023] == (i & 0xff);
      std::free(blocks[i]);
    }
    std::free(before);
  });
  worker.join();
  CHECK(ok);
}

}  // TEST_SUITE("base")
