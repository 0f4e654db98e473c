#include "storage/session/pq_connection.h"

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "storage/session/db_session.h"

namespace placement::storage {

absl::Status StatusFromSqlState(absl::string_view state,
                                absl::string_view message) {
  // Class 08: connection exception. 57P01-57P03: admin/crash shutdown,
  // cannot connect now. 53300: too many connections.
  if (absl::StartsWith(state, "08") || absl::StartsWith(state, "57P") ||
      state == "53300") {
    return absl::UnavailableError(
        absl::StrCat("database unavailable: ", message));
  }
  // 55P03 lock_not_available (lock_timeout), 57014 query_canceled
  // (statement_timeout), 25006 read_only_sql_transaction (a schema outside
  // this binary's window, or a standby), 42P01/42703 undefined table or
  // column (a schema older than this binary): the call may succeed later
  // on the same connection.
  if (state == "55P03" || state == "57014" || state == "25006" ||
      state == "42P01" || state == "42703") {
    absl::Status status = absl::UnavailableError(absl::StrCat(
        "database refused the statement (", state, "), retry: ", message));
    status.SetPayload(kConnectionUsablePayload, absl::Cord());
    return status;
  }
  if (state == "40001" || state == "40P01") {
    return absl::AbortedError(absl::StrCat("transaction conflict: ", message));
  }
  if (state == "23505") return absl::AlreadyExistsError(message);
  if (absl::StartsWith(state, "23") || absl::StartsWith(state, "22")) {
    return absl::InvalidArgumentError(message);
  }
  return absl::InternalError(
      absl::StrCat("database error ", state, ": ", message));
}

void PqConnection::Bind(PGconn* connection) {
  const int backend_pid = connection == nullptr ? 0 : PQbackendPID(connection);
  if (connection != connection_ || backend_pid != backend_pid_) {
    prepared_.clear();
  }
  connection_ = connection;
  backend_pid_ = backend_pid;
}

absl::Status PqConnection::StatusOfResult(const PGresult* result) const {
  if (result == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("database unavailable: ", PQerrorMessage(connection_)));
  }
  switch (PQresultStatus(result)) {
    case PGRES_COMMAND_OK:
    case PGRES_TUPLES_OK:
    case PGRES_COPY_IN:
      return absl::OkStatus();
    default:
      break;
  }
  const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  const std::string message = PQresultErrorMessage(result);
  if (state == nullptr || !ok()) {
    return absl::UnavailableError(
        absl::StrCat("database unavailable: ", message));
  }
  return StatusFromSqlState(state, message);
}

absl::StatusOr<PqResult> PqConnection::Exec(
    absl::string_view sql, const std::vector<const char*>& params) {
  const std::string statement(sql);
  PqResult result(
      PQexecParams(connection_, statement.c_str(),
                   static_cast<int>(params.size()), /*paramTypes=*/nullptr,
                   params.data(), /*paramLengths=*/nullptr,
                   /*paramFormats=*/nullptr, /*resultFormat=*/0),
      &PQclear);
  if (absl::Status status = StatusOfResult(result.get()); !status.ok()) {
    return status;
  }
  return result;
}

absl::StatusOr<PqResult> PqConnection::ExecPrepared(
    const std::string& name, absl::string_view sql,
    const std::vector<std::string>& binary_params) {
  if (!prepared_.contains(name)) {
    const std::string statement(sql);
    PqResult prepared(PQprepare(connection_, name.c_str(), statement.c_str(),
                                static_cast<int>(binary_params.size()),
                                /*paramTypes=*/nullptr),
                      &PQclear);
    if (absl::Status status = StatusOfResult(prepared.get()); !status.ok()) {
      return status;
    }
    prepared_.insert(name);
  }
  std::vector<const char*> values;
  std::vector<int> lengths;
  values.reserve(binary_params.size());
  lengths.reserve(binary_params.size());
  for (const std::string& param : binary_params) {
    values.push_back(param.data());
    lengths.push_back(static_cast<int>(param.size()));
  }
  const std::vector<int> formats(binary_params.size(), 1);
  PqResult result(
      PQexecPrepared(connection_, name.c_str(),
                     static_cast<int>(binary_params.size()), values.data(),
                     lengths.data(), formats.data(), /*resultFormat=*/0),
      &PQclear);
  if (absl::Status status = StatusOfResult(result.get()); !status.ok()) {
    return status;
  }
  return result;
}

absl::StatusOr<int64_t> PqConnection::CopyIn(absl::string_view copy_sql,
                                             absl::string_view data) {
  absl::StatusOr<PqResult> started = Exec(copy_sql);
  if (!started.ok()) return started.status();
  if (PQresultStatus(started->get()) != PGRES_COPY_IN) {
    return absl::InternalError("COPY did not start");
  }
  // libpq copies into its own buffer and flushes as it fills; large chunks
  // keep the per-call overhead negligible.
  constexpr size_t kChunk = 1 << 20;
  for (size_t offset = 0; offset < data.size(); offset += kChunk) {
    const size_t length = std::min(kChunk, data.size() - offset);
    if (PQputCopyData(connection_, data.data() + offset,
                      static_cast<int>(length)) != 1) {
      return absl::UnavailableError(absl::StrCat(
          "database unavailable during COPY: ", PQerrorMessage(connection_)));
    }
  }
  if (PQputCopyEnd(connection_, nullptr) != 1) {
    return absl::UnavailableError(absl::StrCat(
        "database unavailable ending COPY: ", PQerrorMessage(connection_)));
  }
  absl::Status status = absl::OkStatus();
  int64_t rows = 0;
  while (PGresult* raw = PQgetResult(connection_)) {
    PqResult result(raw, &PQclear);
    if (absl::Status s = StatusOfResult(result.get()); !s.ok() && status.ok()) {
      status = s;
    }
    const char* tuples = PQcmdTuples(result.get());
    if (tuples != nullptr && *tuples != '\0') rows = std::atoll(tuples);
  }
  if (!status.ok()) return status;
  return rows;
}

}  // namespace placement::storage
