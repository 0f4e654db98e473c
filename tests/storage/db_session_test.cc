// DbSession against a real PostgreSQL: libpqxx and plain libpq share one
// connection per session, and the process-wide count of open connections
// (placement_db_connections_open) follows the sessions.
#include "storage/db_session.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "storage/session_connection.h"
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

}  // namespace
}  // namespace placement::storage
