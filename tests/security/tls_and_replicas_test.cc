// TLS, mutual TLS and token revocation across replicas, with real placementd
// processes on loopback and certificates made by openssl for the test.
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/v1/catalog.grpc.pb.h"
#include "tests/support/fixtures.h"
#include "tests/support/placementd_process.h"
#include "tests/support/test_database.h"

namespace placement {
namespace {

using ::placement::testing::PlacementdPath;
using ::placement::testing::PlacementdProcess;
using ::placement::testing::RunCommand;
using ::placement::testing::TestDatabase;

std::string Read(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// A CA, a server certificate for 127.0.0.1 signed by it, a client
// certificate signed by it, and a client certificate of a stranger CA.
class Certificates {
 public:
  Certificates() {
    char dir[] = "/tmp/placement-tls-XXXXXX";
    dir_ = mkdtemp(dir);
    const std::string script = absl::StrCat(R"(set -e
cd ')",
                                            dir_, R"('
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=test-ca' \
  -keyout ca.key -out ca.pem 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=stranger-ca' \
  -keyout other-ca.key -out other-ca.pem 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > san.ext
openssl req -newkey rsa:2048 -nodes -subj '/CN=localhost' \
  -keyout server.key -out server.csr 2>/dev/null
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
  -days 2 -extfile san.ext -out server.pem 2>/dev/null
for who in client:ca stranger:other-ca; do
  name=${who%%:*}; ca=${who##*:}
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" \
    -keyout $name.key -out $name.csr 2>/dev/null
  openssl x509 -req -in $name.csr -CA $ca.pem -CAkey $ca.key \
    -CAcreateserial -days 2 -out $name.pem 2>/dev/null
done
)");
    std::string output;
    ok_ = RunCommand(absl::StrCat("bash -c \"$(cat <<'EOS'\n", script,
                                  "\nEOS\n)\" 2>&1"),
                     &output) == 0;
    EXPECT_TRUE(ok_) << output;
  }
  ~Certificates() { RunCommand(absl::StrCat("rm -rf '", dir_, "'")); }

  std::string Path(const std::string& name) const {
    return absl::StrCat(dir_, "/", name);
  }

  std::shared_ptr<grpc::ChannelCredentials> Client(
      const std::string& ca, const std::string& identity = "") const {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = Read(Path(ca + ".pem"));
    if (!identity.empty()) {
      options.pem_cert_chain = Read(Path(identity + ".pem"));
      options.pem_private_key = Read(Path(identity + ".key"));
    }
    return grpc::SslCredentials(options);
  }

  bool ok() const { return ok_; }

 private:
  std::string dir_;
  bool ok_ = false;
};

grpc::StatusCode ListSkusWith(int port,
                              std::shared_ptr<grpc::ChannelCredentials> creds) {
  auto stub = v1::CatalogService::NewStub(
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), creds));
  v1::ListSkusRequest request;
  v1::ListSkusResponse response;
  return stub->ListSkus(testing::Deadline(5).get(), request, &response)
      .error_code();
}

TEST(TlsTest, TlsHandshakesThatMustSucceedAndThatMustFail) {
  Certificates certs;
  ASSERT_TRUE(certs.ok());
  TestDatabase db;
  db.Migrate();
  auto placementd =
      PlacementdProcess::Start(db.url(),
                               {"--tls_cert=" + certs.Path("server.pem"),
                                "--tls_key=" + certs.Path("server.key")},
                               certs.Client("ca"));
  ASSERT_TRUE(placementd.ok()) << placementd.status();
  ASSERT_TRUE((*placementd)->WaitForHealth(true, absl::Seconds(10)))
      << (*placementd)->LogTail();
  const int port = (*placementd)->port();
  EXPECT_EQ(ListSkusWith(port, certs.Client("ca")), grpc::StatusCode::OK);
  // A client that does not trust the server's CA, and one without TLS.
  EXPECT_EQ(ListSkusWith(port, certs.Client("other-ca")),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(ListSkusWith(port, grpc::InsecureChannelCredentials()),
            grpc::StatusCode::UNAVAILABLE);
}

TEST(TlsTest, MutualTlsNeedsAClientCertificateFromTheTrustedCa) {
  Certificates certs;
  ASSERT_TRUE(certs.ok());
  TestDatabase db;
  db.Migrate();
  auto placementd =
      PlacementdProcess::Start(db.url(),
                               {"--tls_cert=" + certs.Path("server.pem"),
                                "--tls_key=" + certs.Path("server.key"),
                                "--tls_client_ca=" + certs.Path("ca.pem")},
                               certs.Client("ca", "client"));
  ASSERT_TRUE(placementd.ok()) << placementd.status();
  ASSERT_TRUE((*placementd)->WaitForHealth(true, absl::Seconds(10)))
      << (*placementd)->LogTail();
  const int port = (*placementd)->port();
  EXPECT_EQ(ListSkusWith(port, certs.Client("ca", "client")),
            grpc::StatusCode::OK);
  EXPECT_EQ(ListSkusWith(port, certs.Client("ca")),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(ListSkusWith(port, certs.Client("ca", "stranger")),
            grpc::StatusCode::UNAVAILABLE);
}

std::unique_ptr<grpc::ClientContext> As(const std::string& secret) {
  auto context = testing::Deadline(5);
  context->AddMetadata("authorization", absl::StrCat("Bearer ", secret));
  return context;
}

// A token revoked through one replica is refused by another within a second.
TEST(RevocationTest, RevokedTokenIsRefusedOnEveryReplicaWithinASecond) {
  TestDatabase db;
  db.Migrate();
  std::string admin;
  ASSERT_EQ(RunCommand(absl::StrCat(PlacementdPath(),
                                    " tokens create --role admin --name it "
                                    "--database_url='",
                                    db.url(), "' 2>/dev/null"),
                       &admin),
            0);
  admin = std::string(absl::StripAsciiWhitespace(admin));
  auto a = PlacementdProcess::Start(db.url(), {"--auth=true"});
  auto b = PlacementdProcess::Start(db.url(), {"--auth=true"});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->WaitForHealth(true, absl::Seconds(10)));
  ASSERT_TRUE((*b)->WaitForHealth(true, absl::Seconds(10)));
  auto on_a = v1::CatalogService::NewStub((*a)->channel());
  auto on_b = v1::CatalogService::NewStub((*b)->channel());

  v1::CreateTokenRequest create;
  create.set_name("planner-ci");
  create.set_role(v1::ROLE_PLANNER);
  v1::CreateTokenResponse created;
  ASSERT_TRUE(on_a->CreateToken(As(admin).get(), create, &created).ok());
  v1::ListSkusRequest list;
  v1::ListSkusResponse skus;
  // The new token reaches B's memory too.
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  for (int i = 0; i < 50 && code != grpc::StatusCode::OK; ++i) {
    code = on_b->ListSkus(As(created.secret()).get(), list, &skus).error_code();
    if (code != grpc::StatusCode::OK) absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(code, grpc::StatusCode::OK);
  // A planner may not create pools.
  v1::CreatePoolRequest pool;
  *pool.mutable_pool() = testing::TrainingPool("p", "L40S-PCIE-48GB");
  v1::CreatePoolResponse pool_response;
  EXPECT_EQ(on_b->CreatePool(As(created.secret()).get(), pool, &pool_response)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  v1::RevokeTokenRequest revoke;
  revoke.set_token_id(created.token().token_id());
  v1::RevokeTokenResponse revoked;
  ASSERT_TRUE(on_a->RevokeToken(As(admin).get(), revoke, &revoked).ok());
  const absl::Time start = absl::Now();
  do {
    code = on_b->ListSkus(As(created.secret()).get(), list, &skus).error_code();
    if (code == grpc::StatusCode::UNAUTHENTICATED) break;
    absl::SleepFor(absl::Milliseconds(10));
  } while (absl::Now() - start < absl::Seconds(2));
  const absl::Duration refused_after = absl::Now() - start;
  EXPECT_EQ(code, grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_LT(refused_after, absl::Seconds(1));
  std::cout << "token revoked on replica A refused by replica B after "
            << absl::FormatDuration(refused_after) << "\n";
}

}  // namespace
}  // namespace placement
