#include "tests/support/test_database.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <pqxx/pqxx>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "storage/schema/migrations.h"
#include "storage/session/db_session.h"

namespace placement::testing {

std::string AdminDatabaseUrl() {
  const char* url = std::getenv("PLACEMENT_TEST_DATABASE_URL");
  if (url == nullptr || *url == '\0') {
    std::cerr << "PLACEMENT_TEST_DATABASE_URL is not set: run the tests "
                 "through scripts/test, which starts a PostgreSQL server\n";
    std::abort();
  }
  return url;
}

std::string UrlWithDatabase(const std::string& url,
                            const std::string& database) {
  // postgres://user@host:port/dbname[?params]
  const size_t scheme = url.find("://");
  const size_t slash =
      url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  const size_t query = url.find('?');
  const std::string base = url.substr(0, slash);
  const std::string params =
      query == std::string::npos ? "" : url.substr(query);
  return absl::StrCat(base, "/", database, params);
}

TestDatabase::TestDatabase() : admin_url_(AdminDatabaseUrl()) {
  static std::atomic<int> counter{0};
  std::random_device device;
  name_ = absl::StrFormat("test_%d_%d_%08x", getpid(), counter.fetch_add(1),
                          device());
  pqxx::connection admin(admin_url_);
  pqxx::nontransaction txn(admin);
  txn.exec(absl::StrCat("CREATE DATABASE ", txn.quote_name(name_)));
  url_ = UrlWithDatabase(admin_url_, name_);
}

TestDatabase::~TestDatabase() {
  try {
    pqxx::connection admin(admin_url_);
    pqxx::nontransaction txn(admin);
    txn.exec(absl::StrCat("DROP DATABASE IF EXISTS ", txn.quote_name(name_),
                          " WITH (FORCE)"));
  } catch (const std::exception& e) {
    std::cerr << "could not drop test database " << name_ << ": " << e.what()
              << "\n";
  }
}

void TestDatabase::Migrate() const {
  storage::DbSession session(url_);
  storage::Migrator migrator(session, storage::EmbeddedMigrations());
  absl::StatusOr<int> applied = migrator.Up();
  if (!applied.ok()) {
    std::cerr << "migrating " << name_ << ": " << applied.status() << "\n";
    std::abort();
  }
}

std::string TestDatabase::QueryValue(const std::string& sql) const {
  pqxx::connection connection(url_);
  pqxx::nontransaction txn(connection);
  pqxx::result result = txn.exec(sql);
  if (result.empty()) return "";
  return result[0][0].is_null() ? "NULL" : result[0][0].as<std::string>();
}

void TestDatabase::Execute(const std::string& sql) const {
  pqxx::connection connection(url_);
  pqxx::nontransaction txn(connection);
  txn.exec(sql);
}

int MigrationsAbove(int version) {
  int above = 0;
  for (const storage::Migration& m : storage::EmbeddedMigrations()) {
    if (m.version > version) ++above;
  }
  return above;
}

}  // namespace placement::testing
