#ifndef PLACEMENT_TESTS_SUPPORT_TEST_DATABASE_H_
#define PLACEMENT_TESTS_SUPPORT_TEST_DATABASE_H_

#include <string>

namespace placement::testing {

// A fresh, empty database on the real PostgreSQL server that scripts/test
// starts (PLACEMENT_TEST_DATABASE_URL, an admin URL), dropped again by the
// destructor. Each test gets its own, so suites can run in parallel.
// Aborts the test binary with a clear message when the variable is unset:
// these tests never fall back to a fake.
class TestDatabase {
 public:
  TestDatabase();
  ~TestDatabase();

  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }

  // Applies every embedded migration.
  void Migrate() const;

  // Runs `sql` and returns the first column of the first row as text
  // ("" when there is no row; "NULL" for NULL).
  std::string QueryValue(const std::string& sql) const;
  void Execute(const std::string& sql) const;

 private:
  std::string admin_url_;
  std::string name_;
  std::string url_;
};

// How many embedded migrations have a version above `version`: the steps
// Migrator::Down takes from the newest schema back to `version` (versions
// may have gaps, e.g. a number taken by a change on another branch).
int MigrationsAbove(int version);

// The admin URL from PLACEMENT_TEST_DATABASE_URL.
std::string AdminDatabaseUrl();

// `url` with its database name replaced by `database`.
std::string UrlWithDatabase(const std::string& url,
                            const std::string& database);

}  // namespace placement::testing

#endif  // PLACEMENT_TESTS_SUPPORT_TEST_DATABASE_H_
