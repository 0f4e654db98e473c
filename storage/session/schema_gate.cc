#include "storage/session/schema_gate.h"

#include <map>

namespace placement::storage {

std::shared_ptr<SchemaGate> SchemaGate::ForDatabase(const std::string& url) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* const gates =
      new std::map<std::string, std::shared_ptr<SchemaGate>>();
  absl::MutexLock lock(&mu);
  std::shared_ptr<SchemaGate>& gate = (*gates)[url];
  if (gate == nullptr) gate = std::make_shared<SchemaGate>();
  return gate;
}

void SchemaGate::Open() {
  absl::MutexLock lock(&mu_);
  if (writable_) return;
  writable_ = true;
  reason_.clear();
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

void SchemaGate::Close(std::string reason) {
  absl::MutexLock lock(&mu_);
  if (!writable_ && reason_ == reason) return;
  writable_ = false;
  reason_ = std::move(reason);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

bool SchemaGate::writable() const {
  absl::MutexLock lock(&mu_);
  return writable_;
}

std::string SchemaGate::reason() const {
  absl::MutexLock lock(&mu_);
  return reason_;
}

}  // namespace placement::storage
