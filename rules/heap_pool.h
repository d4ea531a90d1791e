// The allocator of rule values' heap objects (strings, lists, dicts, log
// lines; through std::allocate_shared): a freed block waits in a per-thread
// list for the next object of its type, so that the millions of short-lived
// values a check of a round makes cost no trip through malloc and free.
//
// Why not glibc's own caches: its per-thread cache keeps seven blocks of a
// size; a chunk of a log makes tens of thousands of line objects that all
// live until the chunk is done, and most of them then went the slow way
// through malloc's bins.
//
// Blocks come from and go back to ::operator new/delete, so a block may be
// freed by another thread than the one that made it. The list of a thread
// that ends is emptied then; a block freed by that thread later (a
// thread_local value destroyed after) goes straight back to the heap.
#pragma once

#include <cstddef>
#include <new>

namespace referee::rules {

namespace heap_pool_detail {

// Trivially destructible, so that it can be read at any point of the
// thread's exit; the Drain below empties it first.
struct FreeList {
  void* head = nullptr;
  size_t count = 0;
  bool closed = false;  // the thread is ending: blocks go back to the heap
};

inline void drain(FreeList& l) {
  while (l.head) {
    void* next = *static_cast<void**>(l.head);
    ::operator delete(l.head);
    l.head = next;
  }
  l.count = 0;
}

template <class Tag>
FreeList& free_list() {
  thread_local FreeList list;
  struct Drain {
    FreeList* l;
    ~Drain() {
      drain(*l);
      l->closed = true;
    }
  };
  thread_local Drain d{&list};
  (void)d;
  return list;
}

}  // namespace heap_pool_detail

template <class T>
struct HeapPool {
  using value_type = T;
  // Blocks kept per thread and type: enough for the lines of one 4 MiB chunk.
  static constexpr size_t kKeep = 1 << 16;

  HeapPool() = default;
  template <class U>
  HeapPool(const HeapPool<U>&) {}

  T* allocate(size_t n) {
    static_assert(sizeof(T) >= sizeof(void*), "a free block holds the next one's address");
    if (n == 1) {
      auto& l = heap_pool_detail::free_list<T>();
      if (l.head) {
        void* p = l.head;
        l.head = *static_cast<void**>(p);
        --l.count;
        return static_cast<T*>(p);
      }
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }

  void deallocate(T* p, size_t n) {
    if (n == 1) {
      auto& l = heap_pool_detail::free_list<T>();
      if (!l.closed && l.count < kKeep) {
        *reinterpret_cast<void**>(p) = l.head;
        l.head = p;
        ++l.count;
        return;
      }
    }
    ::operator delete(p);
  }

  template <class U>
  bool operator==(const HeapPool<U>&) const { return true; }
  template <class U>
  bool operator!=(const HeapPool<U>&) const { return false; }
};

}  // namespace referee::rules
