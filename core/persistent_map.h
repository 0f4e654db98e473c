#ifndef PLACEMENT_CORE_PERSISTENT_MAP_H_
#define PLACEMENT_CORE_PERSISTENT_MAP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "absl/hash/hash.h"

namespace placement::core {

// An ordered map whose copies share structure: copying it copies one
// pointer, and Put/Erase copy only the O(log n) nodes on the path to the
// changed key (a treap with path copying). Nodes are immutable once built,
// so a copy may be read from many threads while its original is changed on
// another. This is what lets a catalog snapshot be rebuilt from the previous
// one at a cost that does not grow with the number of entries.
//
// Priorities come from absl::Hash of the key, so the tree's shape depends on
// the keys only, not on the order they were put in.
template <typename K, typename V>
class PersistentMap {
 public:
  PersistentMap() = default;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Whether this map and `other` are the same tree (one is a copy of the
  // other, unchanged since): then they hold the same entries. False says
  // nothing about the entries.
  bool SharesTreeWith(const PersistentMap& other) const {
    return root_ == other.root_;
  }

  // The value at `key`, or null. Valid while this map (or a copy sharing
  // the node) lives.
  const V* Find(const K& key) const {
    const Node* node = root_.get();
    while (node != nullptr) {
      if (key < node->key) {
        node = node->left.get();
      } else if (node->key < key) {
        node = node->right.get();
      } else {
        return &node->value;
      }
    }
    return nullptr;
  }

  // Inserts or replaces.
  void Put(K key, V value) {
    if (Find(key) == nullptr) ++size_;
    const uint64_t priority = PriorityOf(key);
    root_ = Insert(root_, std::move(key), std::move(value), priority);
  }

  // Removes `key`; false if absent.
  bool Erase(const K& key) {
    if (Find(key) == nullptr) return false;
    root_ = Remove(root_, key);
    --size_;
    return true;
  }

  // Calls fn(key, value) in key order for every key >= `from` until fn
  // returns false.
  template <typename Fn>
  void VisitFrom(const K& from, Fn&& fn) const {
    VisitFrom(root_.get(), from, fn);
  }

  // Calls fn(key, value) for every entry, in key order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    ForEach(root_.get(), fn);
  }

 private:
  struct Node;
  using NodePtr = std::shared_ptr<const Node>;
  struct Node {
    K key;
    V value;
    uint64_t priority;
    NodePtr left;
    NodePtr right;
  };

  static uint64_t PriorityOf(const K& key) { return absl::Hash<K>{}(key); }

  static NodePtr Make(K key, V value, uint64_t priority, NodePtr left,
                      NodePtr right) {
    return std::make_shared<const Node>(Node{std::move(key), std::move(value),
                                             priority, std::move(left),
                                             std::move(right)});
  }
  static NodePtr WithChildren(const Node& n, NodePtr left, NodePtr right) {
    return Make(n.key, n.value, n.priority, std::move(left), std::move(right));
  }

  // Splits `t` into the keys below `key` and those above it (dropping an
  // equal key).
  static std::pair<NodePtr, NodePtr> Split(const NodePtr& t, const K& key) {
    if (t == nullptr) return {nullptr, nullptr};
    if (t->key < key) {
      auto [below, above] = Split(t->right, key);
      return {WithChildren(*t, t->left, std::move(below)), std::move(above)};
    }
    if (key < t->key) {
      auto [below, above] = Split(t->left, key);
      return {std::move(below), WithChildren(*t, std::move(above), t->right)};
    }
    return {t->left, t->right};
  }

  // Joins two trees, every key of `a` below every key of `b`.
  static NodePtr Join(const NodePtr& a, const NodePtr& b) {
    if (a == nullptr) return b;
    if (b == nullptr) return a;
    if (a->priority >= b->priority) {
      return WithChildren(*a, a->left, Join(a->right, b));
    }
    return WithChildren(*b, Join(a, b->left), b->right);
  }

  static NodePtr Insert(const NodePtr& t, K key, V value, uint64_t priority) {
    if (t == nullptr || priority > t->priority) {
      // The new node belongs here (an equal key, if any, is below: its
      // priority is `priority`, and no ancestor's is lower).
      auto [below, above] = Split(t, key);
      return Make(std::move(key), std::move(value), priority, std::move(below),
                  std::move(above));
    }
    if (key < t->key) {
      return WithChildren(
          *t, Insert(t->left, std::move(key), std::move(value), priority),
          t->right);
    }
    if (t->key < key) {
      return WithChildren(
          *t, t->left,
          Insert(t->right, std::move(key), std::move(value), priority));
    }
    return Make(t->key, std::move(value), t->priority, t->left, t->right);
  }

  static NodePtr Remove(const NodePtr& t, const K& key) {
    if (t == nullptr) return t;
    if (key < t->key) return WithChildren(*t, Remove(t->left, key), t->right);
    if (t->key < key) return WithChildren(*t, t->left, Remove(t->right, key));
    return Join(t->left, t->right);
  }

  template <typename Fn>
  static bool VisitFrom(const Node* t, const K& from, Fn& fn) {
    while (t != nullptr && t->key < from) t = t->right.get();
    if (t == nullptr) return true;
    if (!VisitFrom(t->left.get(), from, fn)) return false;
    if (!fn(t->key, t->value)) return false;
    return ForEachUntil(t->right.get(), fn);
  }

  template <typename Fn>
  static bool ForEachUntil(const Node* t, Fn& fn) {
    if (t == nullptr) return true;
    return ForEachUntil(t->left.get(), fn) && fn(t->key, t->value) &&
           ForEachUntil(t->right.get(), fn);
  }

  template <typename Fn>
  static void ForEach(const Node* t, Fn& fn) {
    if (t == nullptr) return;
    ForEach(t->left.get(), fn);
    fn(t->key, t->value);
    ForEach(t->right.get(), fn);
  }

  NodePtr root_;
  std::size_t size_ = 0;
};

}  // namespace placement::core

#endif  // PLACEMENT_CORE_PERSISTENT_MAP_H_
