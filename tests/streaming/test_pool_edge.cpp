// Pools and edges on their own: handles come back, the full-queue policies keep and drop exactly
// the items they should, and concurrent producer/consumer pairs lose nothing (run under TSan too).
#include <catch2/catch.hpp>

#include "eigstream/error.hpp"
#include "eigstream/streaming/edge.hpp"
#include "eigstream/streaming/pool.hpp"
#include "eigstream/streaming/stamp.hpp"
#include "eigstream/streaming/take_back_ring.hpp"

#include <thread>
#include <vector>

namespace es = eigstream::streaming;

namespace {

struct Item {
  explicit Item(int v) : value(v) {}
  es::Stamp stamp;
  int value;
  std::size_t bytes() const { return sizeof value; }
};

}  // namespace

TEST_CASE("pool: acquire until empty, handles give items back", "[streaming]") {
  es::Pool<Item> pool(3, 7);
  CHECK(pool.size() == 3);
  std::vector<es::Handle<Item>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(pool.try_acquire());
    REQUIRE(held.back());
    CHECK(held.back()->value == 7);
  }
  CHECK_FALSE(pool.try_acquire());
  Item* first = &*held[0];
  held[0].reset();
  es::Handle<Item> again = pool.try_acquire();
  REQUIRE(again);
  CHECK(&*again == first);  // the one given back is the one free
  es::Handle<Item> moved = std::move(again);
  CHECK_FALSE(again);
  CHECK(&*moved == first);
}

TEST_CASE("edge: full-queue policies keep and drop exactly the expected items", "[streaming]") {
  const int capacity = 4, pushed = 11;
  const auto policy = GENERATE(es::FullPolicy::drop_newest, es::FullPolicy::drop_oldest);
  es::Pool<Item> pool(pushed, 0);
  es::Edge<Item> edge({capacity, policy});
  for (int i = 0; i < pushed; ++i) {
    es::Handle<Item> item = pool.acquire();
    item->value = i;
    edge.push(std::move(item));
  }
  edge.close();
  CHECK(edge.dropped() == pushed - capacity);
  CHECK(edge.high_water() == capacity);
  // drop_newest keeps the first `capacity` items, drop_oldest the last.
  const int first_kept = policy == es::FullPolicy::drop_newest ? 0 : pushed - capacity;
  for (int i = 0; i < capacity; ++i) {
    es::Handle<Item> item = edge.pop();
    REQUIRE(item);
    CHECK(item->value == first_kept + i);
  }
  CHECK_FALSE(edge.pop());
  // Dropped items went back to the pool: all but none are free again.
  std::vector<es::Handle<Item>> all;
  while (es::Handle<Item> item = pool.try_acquire()) all.push_back(std::move(item));
  CHECK(all.size() == static_cast<std::size_t>(pushed));
}

TEST_CASE("pool: an empty pool is rejected", "[streaming]") {
  CHECK_THROWS_WITH(es::Pool<Item>(0, 1), Catch::Contains("not 0"));
}

TEST_CASE("edge: a zero capacity is rejected", "[streaming]") {
  CHECK_THROWS_AS(es::Edge<Item>({0, es::FullPolicy::block}), eigstream::Error);
}

TEST_CASE("edge: concurrent producer and consumer, every item delivered or counted as dropped", "[streaming]") {
  const auto policy = GENERATE(es::FullPolicy::block, es::FullPolicy::drop_newest, es::FullPolicy::drop_oldest);
  const int total = 20000;
  es::Pool<Item> pool(16, 0);
  es::Edge<Item> edge({4, policy});
  std::thread producer([&] {
    for (int i = 0; i < total; ++i) {
      es::Handle<Item> item = pool.acquire();
      item->value = i;
      edge.push(std::move(item));
    }
    edge.close();
  });
  std::vector<int> received;
  received.reserve(total);
  while (es::Handle<Item> item = edge.pop()) received.push_back(item->value);
  producer.join();
  CHECK(received.size() + edge.dropped() == static_cast<std::size_t>(total));
  if (policy == es::FullPolicy::block) CHECK(edge.dropped() == 0);
  bool increasing = true;
  for (std::size_t i = 1; i < received.size(); ++i) increasing &= received[i] > received[i - 1];
  CHECK(increasing);
  if (policy == es::FullPolicy::drop_oldest) CHECK(received.back() == total - 1);  // the newest is never dropped
}

TEST_CASE("take-back ring: consumer and producer both taking, each entry taken once", "[streaming]") {
  const int total = 50000;
  std::vector<int> values(total);
  es::TakeBackRing<int> ring(3);
  std::vector<int> taken_by_producer;
  std::thread producer([&] {
    for (int i = 0; i < total; ++i) {
      values[i] = i;
      while (!ring.try_push(&values[i]))
        if (int* oldest = ring.try_take()) taken_by_producer.push_back(*oldest);
    }
  });
  // The last entry is never taken back (nothing is pushed after it), so the consumer gets it last.
  std::vector<int> taken_by_consumer;
  for (;;) {
    if (int* entry = ring.try_take()) {
      taken_by_consumer.push_back(*entry);
      if (*entry == total - 1) break;
    }
  }
  producer.join();
  CHECK(ring.size() == 0);
  std::vector<int> seen(total, 0);
  for (int v : taken_by_consumer) ++seen[v];
  for (int v : taken_by_producer) ++seen[v];
  int once = 0;
  for (int count : seen) once += count == 1;
  CHECK(once == total);
}
