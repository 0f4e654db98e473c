#ifndef PLACEMENT_STORAGE_SESSION_CONNECTION_H_
#define PLACEMENT_STORAGE_SESSION_CONNECTION_H_

#include <libpq-fe.h>

#include <cstdint>
#include <pqxx/pqxx>
#include <string>

namespace placement::storage {

// One PostgreSQL connection that libpqxx and plain libpq share.
//
// The rule for the two libraries: queries go through libpqxx (typed rows,
// exceptions mapped once in DbSession); plain libpq is used only where
// libpqxx 6.4 cannot do the job — COPY of large buffers and statements
// with binary parameters (see PqConnection). Both run on this one
// connection, so a session costs the server one backend, not two.
//
// A libpqxx connection (connects at once, like pqxx::connection) that also
// hands out its PGconn. libpqxx may reconnect a broken connection by itself;
// handle() is always the current one.
class SessionConnection : public pqxx::connection_base {
 public:
  // Throws pqxx::broken_connection when the server cannot be reached.
  explicit SessionConnection(const std::string& options);
  ~SessionConnection() noexcept;

  SessionConnection(const SessionConnection&) = delete;
  SessionConnection& operator=(const SessionConnection&) = delete;

  // The libpq connection underneath; nullptr when closed. Valid until the
  // next call into libpqxx that may reconnect, or until destruction.
  PGconn* handle() const { return policy_.current(); }

 private:
  // connect_direct that remembers the handle it made and counts it.
  class Policy : public pqxx::connect_direct {
   public:
    explicit Policy(const std::string& options) : connect_direct(options) {}
    PGconn* do_startconnect(PGconn* orig) override;
    PGconn* do_disconnect(PGconn* orig) noexcept override;
    PGconn* current() const { return current_; }

   private:
    PGconn* current_ = nullptr;
  };

  // Declared (and so constructed) after connection_base, which only keeps a
  // reference to it until init() — the same order pqxx::connection uses.
  Policy policy_;
};

// PostgreSQL connections this process holds open now (every
// SessionConnection): what placement_db_connections_open reports.
int64_t OpenConnectionCount();

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_SESSION_CONNECTION_H_
