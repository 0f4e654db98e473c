#ifndef PLACEMENT_STORAGE_DB_SESSION_H_
#define PLACEMENT_STORAGE_DB_SESSION_H_

#include <exception>
#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/pq_connection.h"
#include "storage/session_connection.h"

namespace placement::storage {

// Maps an exception thrown by libpqxx (or anything else thrown while talking
// to PostgreSQL) to the most specific status:
//   connection lost, server shutting down         -> UNAVAILABLE (retry call)
//   serialization failure, deadlock               -> ABORTED (retry txn)
//   unique violation                              -> ALREADY_EXISTS
//   check / foreign-key / not-null / data errors  -> INVALID_ARGUMENT
//   anything else                                 -> INTERNAL
absl::Status StatusFromException(const std::exception& e);

// Whether `status` means the connection that produced it is no longer usable.
bool IsConnectionLost(const absl::Status& status);

// One PostgreSQL connection owned by one thread, opened lazily and replaced
// after it breaks; libpqxx (Run) and plain libpq (RunRaw) share it. Every
// pqxx exception stops here: Run() returns it as a status, so nothing thrown
// by libpqxx crosses into services/.
//
// Not thread-safe: each worker thread owns its own session.
class DbSession {
 public:
  // `url` is a libpq connection string or URI. A connect_timeout is added
  // when it has none, so that an unreachable server fails fast.
  explicit DbSession(std::string url);

  DbSession(const DbSession&) = delete;
  DbSession& operator=(const DbSession&) = delete;

  // Runs `fn(pqxx::connection_base&)`, which returns absl::Status or
  // absl::StatusOr<T>. A connection failure or an exception becomes the
  // returned status; a lost connection is dropped and reopened on the next
  // call.
  template <typename Fn>
  std::invoke_result_t<Fn, pqxx::connection_base&> Run(Fn&& fn) {
    absl::StatusOr<SessionConnection*> connection = Connection();
    if (!connection.ok()) return connection.status();
    try {
      auto result = fn(**connection);
      if (IsConnectionLost(StatusOf(result))) Drop();
      return result;
    } catch (const std::exception& e) {
      absl::Status status = StatusFromException(e);
      if (IsConnectionLost(status) || !(*connection)->is_open()) Drop();
      return status;
    }
  }

  // Runs `fn(PqConnection&)` with plain libpq on the same connection (for
  // bulk COPY and binary parameters), dropped when it is lost.
  template <typename Fn>
  std::invoke_result_t<Fn, PqConnection&> RunRaw(Fn&& fn) {
    absl::StatusOr<SessionConnection*> connection = Connection();
    if (!connection.ok()) return connection.status();
    raw_.Bind((*connection)->handle());
    auto result = fn(raw_);
    if (IsConnectionLost(StatusOf(result)) || !raw_.ok()) Drop();
    return result;
  }

  // A round trip to the server ("SELECT 1").
  absl::Status Ping();

  // Closes the connection; the next Run() opens a new one.
  void Drop() {
    raw_.Bind(nullptr);
    connection_.reset();
  }

  bool is_connected() const { return connection_ != nullptr; }

 private:
  static const absl::Status& StatusOf(const absl::Status& s) { return s; }
  template <typename T>
  static absl::Status StatusOf(const absl::StatusOr<T>& s) {
    return s.status();
  }

  absl::StatusOr<SessionConnection*> Connection();

  std::string url_;
  std::unique_ptr<SessionConnection> connection_;
  PqConnection raw_;  // plain libpq on connection_'s PGconn
};

// Adds connect_timeout (seconds) to a libpq URI or key=value string that has
// none.
std::string WithConnectTimeout(const std::string& url, int seconds);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_DB_SESSION_H_
