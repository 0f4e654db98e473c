#include "storage/session/session_connection.h"

#include <atomic>

namespace placement::storage {
namespace {

std::atomic<int64_t> open_connections{0};

}  // namespace

SessionConnection::SessionConnection(const std::string& options)
    : pqxx::connection_base(policy_), policy_(options) {
  init();
}

SessionConnection::~SessionConnection() noexcept { close(); }

PGconn* SessionConnection::Policy::do_startconnect(PGconn* orig) {
  // On failure connect_direct closes what it opened (through
  // do_disconnect, which counts only current_) and throws.
  PGconn* const opened = connect_direct::do_startconnect(orig);
  if (opened != current_) {
    if (opened != nullptr)
      open_connections.fetch_add(1, std::memory_order_relaxed);
    current_ = opened;
  }
  return opened;
}

PGconn* SessionConnection::Policy::do_disconnect(PGconn* orig) noexcept {
  if (orig != nullptr && orig == current_) {
    open_connections.fetch_sub(1, std::memory_order_relaxed);
    current_ = nullptr;
  }
  return connect_direct::do_disconnect(orig);
}

int64_t OpenConnectionCount() {
  return open_connections.load(std::memory_order_relaxed);
}

}  // namespace placement::storage
