#include "storage/session/db_session.h"

#include <poll.h>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace placement::storage {
namespace {

constexpr int kConnectTimeoutSeconds = 3;

// Whether the server closed `connection` while it sat idle between calls
// (its backend terminated: the primary crashed or was switched over, or the
// server restarted), so that it is replaced before a call uses it instead
// of failing that call. Looks without waiting and sends nothing. A
// session's connection never LISTENs (ChangeListener has its own), so on an
// idle one nothing arrives but the server's goodbye: a FATAL message, then
// the end of the stream. Anything readable counts, whether or not libpq has
// seen the end yet; a healthy connection is never readable here, and if it
// were, replacing it would cost only a reconnect.
bool ClosedWhileIdle(PGconn* connection) {
  const int socket = PQsocket(connection);
  if (socket < 0 || PQstatus(connection) == CONNECTION_BAD) return true;
  pollfd ready{socket, POLLIN, 0};
  return poll(&ready, 1, 0) != 0;
}

}  // namespace

absl::Status StatusFromException(const std::exception& e) {
  const std::string what = e.what();
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) {
    return absl::UnavailableError(absl::StrCat("database unavailable: ", what));
  }
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    return absl::UnavailableError(
        absl::StrCat("database connection lost during commit: ", what));
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
    return StatusFromSqlState(sql->sqlstate(), what);
  }
  if (dynamic_cast<const pqxx::transaction_rollback*>(&e) != nullptr) {
    return absl::AbortedError(what);
  }
  return absl::InternalError(absl::StrCat("database error: ", what));
}

bool IsConnectionLost(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnavailable &&
         !status.GetPayload(kConnectionUsablePayload).has_value();
}

std::string WithConnectTimeout(const std::string& url, int seconds) {
  if (absl::StrContains(url, "connect_timeout")) return url;
  if (absl::StartsWith(url, "postgres://") ||
      absl::StartsWith(url, "postgresql://")) {
    return absl::StrCat(url, absl::StrContains(url, "?") ? "&" : "?",
                        "connect_timeout=", seconds);
  }
  return absl::StrCat(url, url.empty() ? "" : " ", "connect_timeout=", seconds);
}

DbSession::DbSession(std::string url, SessionLimits limits)
    : url_(WithConnectTimeout(url, kConnectTimeoutSeconds)),
      limits_(limits),
      gate_(SchemaGate::ForDatabase(url)) {}

absl::StatusOr<SessionConnection*> DbSession::Connection() {
  if (connection_ == nullptr || !connection_->is_open() ||
      connection_->handle() == nullptr ||
      ClosedWhileIdle(connection_->handle())) {
    Drop();
    try {
      connection_ = std::make_unique<SessionConnection>(url_);
    } catch (const std::exception& e) {
      return absl::UnavailableError(
          absl::StrCat("cannot connect to the database: ", e.what()));
    }
  }
  if (absl::Status status = Configure(*connection_); !status.ok()) {
    Drop();
    return status;
  }
  return connection_.get();
}

absl::Status DbSession::Configure(SessionConnection& connection) {
  // libpqxx may have reconnected by itself: a new backend has none of the
  // settings.
  const int backend = PQbackendPID(connection.handle());
  const uint64_t generation = gate_->generation();
  if (backend == configured_backend_ && generation == configured_generation_) {
    return absl::OkStatus();
  }
  std::string sql;
  if (backend != configured_backend_) {
    absl::StrAppend(&sql, "SET lock_timeout = ",
                    absl::ToInt64Milliseconds(limits_.lock_timeout),
                    "; SET statement_timeout = ",
                    absl::ToInt64Milliseconds(limits_.statement_timeout), "; ");
  }
  absl::StrAppend(&sql, "SET default_transaction_read_only = ",
                  gate_->writable() ? "off" : "on");
  try {
    pqxx::nontransaction txn(connection);
    txn.exec(sql);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot configure the database session: ", e.what()));
  }
  configured_backend_ = backend;
  configured_generation_ = generation;
  return absl::OkStatus();
}

absl::Status DbSession::GateRefusal(const absl::Status& status) const {
  absl::Status refusal = absl::UnavailableError(absl::StrCat(
      "writes refused: ", gate_->reason(), " (", status.message(), ")"));
  if (!IsConnectionLost(status)) {
    refusal.SetPayload(kConnectionUsablePayload, absl::Cord());
  }
  return refusal;
}

absl::Status DbSession::Ping() {
  return Run([](pqxx::connection_base& c) -> absl::Status {
    pqxx::nontransaction txn(c);
    txn.exec("SELECT 1");
    return absl::OkStatus();
  });
}

}  // namespace placement::storage
