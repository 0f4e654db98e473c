#ifndef PLACEMENT_STORAGE_SCHEMA_GATE_H_
#define PLACEMENT_STORAGE_SCHEMA_GATE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace placement::storage {

// Whether this process may write to one database: open unless the schema
// was last found outside the versions this binary serves (see
// HealthMonitor, which opens and closes it). Every DbSession on that
// database follows it: while it is closed, its transactions are read only
// (default_transaction_read_only), so a write is refused by PostgreSQL
// itself, whatever the code path, and every error the session reports
// becomes UNAVAILABLE naming `reason` (a client retries; an upgrade or a
// rollback will bring the schema back into the window).
//
// One gate per database URL in the process, shared by its sessions.
class SchemaGate {
 public:
  static std::shared_ptr<SchemaGate> ForDatabase(const std::string& url);

  SchemaGate() = default;
  SchemaGate(const SchemaGate&) = delete;
  SchemaGate& operator=(const SchemaGate&) = delete;

  void Open();
  void Close(std::string reason);

  // Changes at every Open or Close that changes the state, so a session
  // checks one atomic per call and re-reads the state only then.
  uint64_t generation() const {
    return generation_.load(std::memory_order_acquire);
  }
  bool writable() const;
  // Why writes are refused; empty while open.
  std::string reason() const;

 private:
  mutable absl::Mutex mu_;
  bool writable_ ABSL_GUARDED_BY(mu_) = true;
  std::string reason_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> generation_{1};
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_SCHEMA_GATE_H_
