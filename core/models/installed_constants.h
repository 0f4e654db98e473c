#ifndef PLACEMENT_CORE_MODELS_INSTALLED_CONSTANTS_H_
#define PLACEMENT_CORE_MODELS_INSTALLED_CONSTANTS_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace placement::core {

// The set of model constants that start-up may install in place of the
// shipped one (placementd --model_constants_file) while other threads read
// it. Constant-initialized and trivially destructible, so that it may be a
// namespace-scope ABSL_CONST_INIT object, one per Constants type.
//
// Every set installed stays alive for the life of the process: a reader may
// still hold the one a later Install replaces. Installed once at start, bar
// tests.
template <typename Constants>
class InstalledConstants {
 public:
  constexpr InstalledConstants() = default;
  InstalledConstants(const InstalledConstants&) = delete;
  InstalledConstants& operator=(const InstalledConstants&) = delete;

  // The last set installed; nullptr before any.
  const Constants* Get() const {
    return current_.load(std::memory_order_acquire);
  }

  void Install(const Constants& constants) {
    static std::mutex* const mutex = new std::mutex;
    static auto* const kept = new std::vector<std::unique_ptr<const Constants>>;
    std::lock_guard<std::mutex> lock(*mutex);
    kept->push_back(std::make_unique<const Constants>(constants));
    current_.store(kept->back().get(), std::memory_order_release);
  }

 private:
  std::atomic<const Constants*> current_{nullptr};
};

}  // namespace placement::core

#endif  // PLACEMENT_CORE_MODELS_INSTALLED_CONSTANTS_H_
