#include "core/persistent_map.h"

#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace placement::core {
namespace {

using Map = PersistentMap<std::string, int>;

std::vector<std::pair<std::string, int>> Contents(const Map& map) {
  std::vector<std::pair<std::string, int>> out;
  map.ForEach([&](const std::string& k, int v) { out.emplace_back(k, v); });
  return out;
}

std::vector<std::pair<std::string, int>> Contents(
    const std::map<std::string, int>& map) {
  return {map.begin(), map.end()};
}

TEST(PersistentMapTest, PutReplacesAndEraseRemoves) {
  Map map;
  map.Put("b", 1);
  map.Put("a", 2);
  map.Put("b", 3);
  EXPECT_EQ(map.size(), 2u);
  ASSERT_NE(map.Find("b"), nullptr);
  EXPECT_EQ(*map.Find("b"), 3);
  EXPECT_EQ(map.Find("c"), nullptr);
  EXPECT_TRUE(map.Erase("a"));
  EXPECT_FALSE(map.Erase("a"));
  EXPECT_EQ(Contents(map),
            (std::vector<std::pair<std::string, int>>{{"b", 3}}));
}

// The snapshot property: a copy never sees what is done to the original
// after it was taken, whatever the sequence of changes.
TEST(PersistentMapTest, CopiesAreUnaffectedByLaterChanges) {
  std::mt19937 random(20);
  Map map;
  std::map<std::string, int> reference;
  std::vector<std::pair<Map, std::map<std::string, int>>> copies;
  for (int i = 0; i < 4000; ++i) {
    const std::string key = absl::StrCat("k", random() % 300);
    if (random() % 4 == 0) {
      EXPECT_EQ(map.Erase(key), reference.erase(key) == 1);
    } else {
      const int value = static_cast<int>(random() % 1000);
      map.Put(key, value);
      reference[key] = value;
    }
    ASSERT_EQ(map.size(), reference.size());
    if (i % 500 == 0) copies.emplace_back(map, reference);
  }
  EXPECT_EQ(Contents(map), Contents(reference));
  for (const auto& [copy, expected] : copies) {
    EXPECT_EQ(Contents(copy), Contents(expected));
    EXPECT_EQ(copy.size(), expected.size());
  }
}

TEST(PersistentMapTest, VisitFromStartsAtTheFirstKeyNotBelowAndStops) {
  Map map;
  for (const char* key : {"a1", "b1", "b2", "b3", "c1"}) map.Put(key, 0);
  std::vector<std::string> seen;
  map.VisitFrom("b", [&](const std::string& key, int) {
    if (key[0] != 'b') return false;
    seen.push_back(key);
    return true;
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"b1", "b2", "b3"}));
  seen.clear();
  map.VisitFrom("d", [&](const std::string& key, int) {
    seen.push_back(key);
    return true;
  });
  EXPECT_TRUE(seen.empty());
}

// The shape depends on the keys only: the same keys put in any order give
// the same depth, and that depth stays logarithmic (a treap's expected
// depth is ~2 ln n; 100,000 keys in sorted order would make a plain binary
// tree 100,000 deep).
TEST(PersistentMapTest, SortedInsertionStaysShallow) {
  PersistentMap<int, int> map;
  for (int i = 0; i < 100000; ++i) map.Put(i, i);
  int found = 0;
  for (int i = 0; i < 100000; i += 997) found += map.Find(i) != nullptr;
  EXPECT_EQ(found, 101);
  int visited = 0;
  map.VisitFrom(99990, [&](int, int) {
    ++visited;
    return true;
  });
  EXPECT_EQ(visited, 10);
}

}  // namespace
}  // namespace placement::core
