#include "base/memory.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

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

}  // TEST_SUITE("base")
