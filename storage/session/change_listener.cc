#include "storage/session/change_listener.h"

#include <pqxx/pqxx>

#include "absl/time/clock.h"
#include "storage/session/db_session.h"

namespace placement::storage {

class ChangeListener::Receiver : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection_base& c, const std::string& channel)
      : pqxx::notification_receiver(c, channel) {}
  void operator()(const std::string& /*payload*/, int /*pid*/) override {}
};

absl::Status NotifyChange(DbSession& session, const std::string& channel) {
  return session.Run([&](pqxx::connection_base& c) -> absl::Status {
    pqxx::nontransaction txn(c);
    txn.exec_params("SELECT pg_notify($1, '')", channel);
    return absl::OkStatus();
  });
}

ChangeListener::ChangeListener(std::string url, std::string channel)
    : url_(WithConnectTimeout(url, 3)), channel_(std::move(channel)) {}

ChangeListener::~ChangeListener() {
  receiver_.reset();  // UNLISTENs while the connection still exists
  connection_.reset();
}

bool ChangeListener::Reconnected() {
  const bool reconnected = reconnected_;
  reconnected_ = false;
  return reconnected;
}

absl::StatusOr<int> ChangeListener::Wait(absl::Duration timeout) {
  try {
    if (connection_ == nullptr || !connection_->is_open()) {
      receiver_.reset();
      connection_.reset();
      connection_ = std::make_unique<SessionConnection>(url_);
      receiver_ = std::make_unique<Receiver>(*connection_, channel_);
      // LISTEN is issued lazily; make it happen now so that nothing
      // committed after this point is missed.
      connection_->get_notifs();
      reconnected_ = true;
    }
    const int64_t micros = absl::ToInt64Microseconds(timeout);
    return connection_->await_notification(micros / 1000000, micros % 1000000);
  } catch (const std::exception& e) {
    receiver_.reset();
    connection_.reset();
    absl::Status status = StatusFromException(e);
    if (status.code() != absl::StatusCode::kUnavailable) {
      status = absl::UnavailableError(status.message());
    }
    return status;
  }
}

}  // namespace placement::storage
