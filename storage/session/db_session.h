#ifndef PLACEMENT_STORAGE_DB_SESSION_H_
#define PLACEMENT_STORAGE_DB_SESSION_H_

#include <exception>
#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/session/pq_connection.h"
#include "storage/session/schema_gate.h"
#include "storage/session/session_connection.h"

namespace placement::storage {

// Maps an exception thrown by libpqxx (or anything else thrown while talking
// to PostgreSQL) to the most specific status:
//   connection lost, server shutting down         -> UNAVAILABLE (retry call)
//   lock_timeout, statement_timeout, read-only,
//   a table or column the schema lacks (yet)      -> UNAVAILABLE (retry call;
//                                                    the connection is kept)
//   serialization failure, deadlock               -> ABORTED (retry txn)
//   unique violation                              -> ALREADY_EXISTS
//   check / foreign-key / not-null / data errors  -> INVALID_ARGUMENT
//   anything else                                 -> INTERNAL
absl::Status StatusFromException(const std::exception& e);

// Whether `status` means the connection that produced it is no longer usable
// (UNAVAILABLE, but not a statement refused on a healthy connection).
bool IsConnectionLost(const absl::Status& status);

// What a session's statements may wait for, set on every connection it
// opens. Zero: the server's default (no limit). A lock wait or a statement
// that runs past its limit fails with UNAVAILABLE: the caller retries, and
// a worker is never parked behind a migration's ACCESS EXCLUSIVE lock.
struct SessionLimits {
  absl::Duration lock_timeout = absl::ZeroDuration();
  absl::Duration statement_timeout = absl::ZeroDuration();

  // The database workers' sessions: short statements that answer RPCs.
  static SessionLimits Worker() {
    return {absl::Seconds(2), absl::Seconds(60)};
  }
};

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
  explicit DbSession(std::string url, SessionLimits limits = {});

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
      return Explained(std::move(result));
    } catch (const std::exception& e) {
      absl::Status status = StatusFromException(e);
      if (IsConnectionLost(status) || !(*connection)->is_open()) Drop();
      return Explained(std::move(status));
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
    return Explained(std::move(result));
  }

  // A round trip to the server ("SELECT 1").
  absl::Status Ping();

  // Closes the connection; the next Run() opens a new one.
  void Drop() {
    raw_.Bind(nullptr);
    connection_.reset();
    configured_backend_ = 0;
  }

  bool is_connected() const { return connection_ != nullptr; }

 private:
  static const absl::Status& StatusOf(const absl::Status& s) { return s; }
  template <typename T>
  static absl::Status StatusOf(const absl::StatusOr<T>& s) {
    return s.status();
  }

  // The open connection, (re)configured: limits set on a new backend, and
  // read only or not as the schema gate says now.
  absl::StatusOr<SessionConnection*> Connection();
  absl::Status Configure(SessionConnection& connection);

  // While the schema gate is closed, a failure says why: UNAVAILABLE
  // naming the schema versions (a write refused as read only, a table an
  // old schema lacks), never INTERNAL.
  template <typename R>
  R Explained(R result) const {
    const absl::Status& status = StatusOf(result);
    if (status.ok() || gate_->writable()) return result;
    if (status.code() != absl::StatusCode::kUnavailable &&
        status.code() != absl::StatusCode::kInternal) {
      return result;
    }
    return R(GateRefusal(status));
  }
  absl::Status GateRefusal(const absl::Status& status) const;

  std::string url_;
  SessionLimits limits_;
  std::shared_ptr<SchemaGate> gate_;
  int configured_backend_ = 0;          // the backend pid limits were set on
  uint64_t configured_generation_ = 0;  // the gate state set on it
  std::unique_ptr<SessionConnection> connection_;
  PqConnection raw_;  // plain libpq on connection_'s PGconn
};

// Adds connect_timeout (seconds) to a libpq URI or key=value string that has
// none.
std::string WithConnectTimeout(const std::string& url, int seconds);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_DB_SESSION_H_
