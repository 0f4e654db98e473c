// DbSession against a real PostgreSQL: libpqxx and plain libpq share one
// connection per session, the process-wide count of open connections
// (placement_db_connections_open) follows the sessions, and a connection
// the server closed while the session was idle is replaced before use.
#include "storage/session/db_session.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "storage/session/session_connection.h"
#include "tests/support/test_database.h"

namespace placement::storage {
namespace {

using ::placement::testing::TestDatabase;

absl::StatusOr<int> BackendPidThroughLibpqxx(DbSession& session) {
  return session.Run([](pqxx::connection_base& c) -> absl::StatusOr<int> {
    pqxx::nontransaction txn(c);
    return txn.exec("SELECT pg_backend_pid()")[0][0].as<int>();
  });
}

absl::StatusOr<int> BackendPidThroughLibpq(DbSession& session) {
  return session.RunRaw([](PqConnection& c) -> absl::StatusOr<int> {
    absl::StatusOr<PqResult> result = c.Exec("SELECT pg_backend_pid()");
    if (!result.ok()) return result.status();
    return std::atoi(PQgetvalue(result->get(), 0, 0));
  });
}

TEST(DbSessionTest, LibpqxxAndLibpqShareOneConnection) {
  TestDatabase db;
  const int64_t before = OpenConnectionCount();
  {
    DbSession session(db.url());
    absl::StatusOr<int> pqxx_pid = BackendPidThroughLibpqxx(session);
    ASSERT_TRUE(pqxx_pid.ok()) << pqxx_pid.status();
    absl::StatusOr<int> raw_pid = BackendPidThroughLibpq(session);
    ASSERT_TRUE(raw_pid.ok()) << raw_pid.status();
    EXPECT_EQ(*raw_pid, *pqxx_pid) << "two backends for one session";
    EXPECT_EQ(OpenConnectionCount(), before + 1);

    // A dropped connection is reopened by either library, still one.
    session.Drop();
    EXPECT_EQ(OpenConnectionCount(), before);
    raw_pid = BackendPidThroughLibpq(session);
    ASSERT_TRUE(raw_pid.ok()) << raw_pid.status();
    pqxx_pid = BackendPidThroughLibpqxx(session);
    ASSERT_TRUE(pqxx_pid.ok()) << pqxx_pid.status();
    EXPECT_EQ(*raw_pid, *pqxx_pid);
    EXPECT_EQ(OpenConnectionCount(), before + 1);
  }
  EXPECT_EQ(OpenConnectionCount(), before);
}

// What happens to every idle session when the primary fails over or the
// server restarts: the call that comes next runs on a new connection
// instead of failing with UNAVAILABLE.
TEST(DbSessionTest, ConnectionClosedWhileIdleIsReplacedBeforeUse) {
  TestDatabase db;
  DbSession session(db.url());
  absl::StatusOr<int> first = BackendPidThroughLibpqxx(session);
  ASSERT_TRUE(first.ok()) << first.status();
  db.Execute("SELECT pg_terminate_backend(" + std::to_string(*first) + ")");
  // The backend's exit reaches the session's socket.
  for (int i = 0; i < 100 && db.QueryValue("SELECT count(*) FROM "
                                           "pg_stat_activity WHERE pid = " +
                                           std::to_string(*first)) != "0";
       ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }

  absl::StatusOr<int> second = BackendPidThroughLibpqxx(session);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(*second, *first);

  // The same through plain libpq.
  db.Execute("SELECT pg_terminate_backend(" + std::to_string(*second) + ")");
  for (int i = 0; i < 100 && db.QueryValue("SELECT count(*) FROM "
                                           "pg_stat_activity WHERE pid = " +
                                           std::to_string(*second)) != "0";
       ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  absl::StatusOr<int> third = BackendPidThroughLibpq(session);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_NE(*third, *second);
}

}  // namespace
}  // namespace placement::storage
