#include "storage/db_session.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace placement::storage {
namespace {

constexpr int kConnectTimeoutSeconds = 3;

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
  return status.code() == absl::StatusCode::kUnavailable;
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

DbSession::DbSession(std::string url)
    : url_(WithConnectTimeout(url, kConnectTimeoutSeconds)) {}

absl::StatusOr<SessionConnection*> DbSession::Connection() {
  if (connection_ != nullptr && connection_->is_open() &&
      connection_->handle() != nullptr) {
    return connection_.get();
  }
  Drop();
  try {
    connection_ = std::make_unique<SessionConnection>(url_);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot connect to the database: ", e.what()));
  }
  return connection_.get();
}

absl::Status DbSession::Ping() {
  return Run([](pqxx::connection_base& c) -> absl::Status {
    pqxx::nontransaction txn(c);
    txn.exec("SELECT 1");
    return absl::OkStatus();
  });
}

}  // namespace placement::storage
