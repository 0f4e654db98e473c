#ifndef PLACEMENT_STORAGE_PQ_CONNECTION_H_
#define PLACEMENT_STORAGE_PQ_CONNECTION_H_

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace placement::storage {

// A PGresult that is cleared when it goes out of scope.
using PqResult = std::unique_ptr<PGresult, decltype(&PQclear)>;

// The rule for the two client libraries in storage/: libpqxx is the default
// (transactions that roll back unless committed; exceptions mapped once, by
// StatusFromException). Raw libpq, through this class, only on the hot paths
// that need what libpqxx 6.4 cannot do: sample ingestion (COPY of large
// buffers) and plan records (prepared statements with binary-array
// parameters, COPY of predictions), with the plan reads beside them. One
// transaction uses one library from BEGIN to COMMIT; DbSession::RunRaw and
// DbSession::Run say which. See docs/LAYOUT.md.
//
// Plain libpq on a session's connection, for bulk COPY. libpqxx 6.4 writes
// COPY data one row per call and hides the PGconn; telemetry ingestion needs
// to hand libpq large buffers, so the sample path talks to libpq directly,
// on the PGconn of the session's libpqxx connection (SessionConnection):
// one connection per session. Every error comes back as a status (the same
// mapping as for libpqxx, by SQLSTATE).
//
// Not thread-safe: owned by one worker's DbSession.
class PqConnection {
 public:
  PqConnection() = default;

  PqConnection(const PqConnection&) = delete;
  PqConnection& operator=(const PqConnection&) = delete;

  // Works on `connection` (borrowed; it stays owned by its
  // SessionConnection) from now on. Statements prepared earlier are
  // forgotten when it is another connection than before.
  void Bind(PGconn* connection);

  // Runs a statement with text parameters ($1..$n; nullptr for NULL).
  absl::StatusOr<PqResult> Exec(absl::string_view sql,
                                const std::vector<const char*>& params = {});

  // Runs `sql` with parameters in binary format (see BinaryArray), as the
  // statement prepared on this connection under `name`, preparing it the
  // first time: one round trip, and no parsing or planning after the first.
  // `name` must always come with the same `sql`.
  absl::StatusOr<PqResult> ExecPrepared(
      const std::string& name, absl::string_view sql,
      const std::vector<std::string>& binary_params);

  // Runs `copy_sql` (COPY ... FROM STDIN), sends `data` in the format it
  // names (text, or binary: see BinaryCopy), and ends the copy. Returns the
  // number of rows copied.
  absl::StatusOr<int64_t> CopyIn(absl::string_view copy_sql,
                                 absl::string_view data);

  bool ok() const {
    return connection_ != nullptr && PQstatus(connection_) == CONNECTION_OK;
  }

 private:
  absl::Status StatusOfResult(const PGresult* result) const;

  PGconn* connection_ = nullptr;
  int backend_pid_ = 0;  // tells a new connection at a reused address apart
  absl::flat_hash_set<std::string> prepared_;
};

// A transaction on a PqConnection that rolls back unless committed.
class PqTransaction {
 public:
  explicit PqTransaction(PqConnection& connection) : connection_(connection) {}
  ~PqTransaction() {
    if (open_) (void)connection_.Exec("ROLLBACK");
  }
  PqTransaction(const PqTransaction&) = delete;
  PqTransaction& operator=(const PqTransaction&) = delete;

  absl::Status Begin() {
    absl::StatusOr<PqResult> result = connection_.Exec("BEGIN");
    open_ = result.ok();
    return result.status();
  }
  absl::Status Commit() {
    absl::StatusOr<PqResult> result = connection_.Exec("COMMIT");
    open_ = false;
    return result.status();
  }

 private:
  PqConnection& connection_;
  bool open_ = false;
};

// Set (empty) on an UNAVAILABLE status whose connection is still usable: a
// statement refused (lock or statement timeout, read-only transaction, a
// table the schema lacks yet), not a connection lost.
inline constexpr char kConnectionUsablePayload[] =
    "type.placement/storage.ConnectionUsable";

// The status for an error with SQLSTATE `state` (see StatusFromException).
absl::Status StatusFromSqlState(absl::string_view state,
                                absl::string_view message);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_PQ_CONNECTION_H_
