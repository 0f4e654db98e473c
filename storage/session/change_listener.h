#ifndef PLACEMENT_STORAGE_CHANGE_LISTENER_H_
#define PLACEMENT_STORAGE_CHANGE_LISTENER_H_

#include <memory>
#include <pqxx/pqxx>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/session/db_session.h"
#include "storage/session/session_connection.h"

namespace placement::storage {

// The channel replicas notify when they changed pools or evidence. The
// writer sends it after its commit, coalesced, rather than from inside every
// write transaction: PostgreSQL serializes the commits of transactions that
// NOTIFY, which would cap uploads at one commit (one fsync) at a time.
inline constexpr char kChangesChannel[] = "placement_changes";

// Sends one notification on `channel` (autocommit).
absl::Status NotifyChange(DbSession& session,
                          const std::string& channel = kChangesChannel);

// A dedicated connection that LISTENs on a channel. Not thread-safe: one
// thread waits on it.
class ChangeListener {
 public:
  explicit ChangeListener(std::string url,
                          std::string channel = kChangesChannel);
  ~ChangeListener();

  ChangeListener(const ChangeListener&) = delete;
  ChangeListener& operator=(const ChangeListener&) = delete;

  // Waits up to `timeout` for notifications, (re)connecting and LISTENing
  // first if needed. Returns how many arrived (0 on timeout). UNAVAILABLE
  // when the connection cannot be made or is lost: whatever changed since
  // then was missed, so the caller should re-read everything once it is
  // back (Reconnected() tells when).
  absl::StatusOr<int> Wait(absl::Duration timeout);

  // True once after each new connection: changes may have been missed
  // before it.
  bool Reconnected();

 private:
  class Receiver;

  const std::string url_;
  const std::string channel_;
  std::unique_ptr<SessionConnection> connection_;
  std::unique_ptr<Receiver> receiver_;
  bool reconnected_ = false;
};

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_CHANGE_LISTENER_H_
