#include "services/auth/auth.h"

#include <openssl/rand.h>

#include <algorithm>

#include "absl/hash/hash.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/sha256.h"
#include "services/auth/team_access.h"

namespace placement::services {
namespace {

constexpr uint8_t kAgent = static_cast<uint8_t>(Role::kAgent);
constexpr uint8_t kPlanner = static_cast<uint8_t>(Role::kPlanner);
constexpr uint8_t kFinance = static_cast<uint8_t>(Role::kFinance);
constexpr uint8_t kAdmin = static_cast<uint8_t>(Role::kAdmin);
constexpr uint8_t kReaders = kPlanner | kFinance | kAdmin;

// MethodRule::fleet.
constexpr bool kFleet = true;

constexpr char kBearer[] = "Bearer ";
constexpr char kSecretPrefix[] = "plc_";

}  // namespace

const std::vector<MethodRule>& MethodRules() {
  static const auto* const rules = new std::vector<MethodRule>{
      // Catalog: reads for planners and finance, changes for admins (not
      // bound to teams: pools, tokens and eval criteria are the fleet's).
      {"/placement.v1.CatalogService/ListSkus", kReaders | kAgent, false},
      {"/placement.v1.CatalogService/GetSku", kReaders | kAgent, false},
      {"/placement.v1.CatalogService/ListPools", kReaders | kAgent, false},
      {"/placement.v1.CatalogService/GetPool", kReaders | kAgent, false},
      {"/placement.v1.CatalogService/CreatePool", kAdmin, true, kFleet},
      {"/placement.v1.CatalogService/UpdatePool", kAdmin, true, kFleet},
      {"/placement.v1.CatalogService/CreateToken", kAdmin, true, kFleet},
      {"/placement.v1.CatalogService/RevokeToken", kAdmin, true, kFleet},
      {"/placement.v1.CatalogService/ListTokens", kAdmin, false, kFleet},
      {"/placement.v1.CatalogService/SetEvalCriterion", kAdmin, true, kFleet},
      {"/placement.v1.CatalogService/DeleteEvalCriterion", kAdmin, true,
       kFleet},
      {"/placement.v1.CatalogService/ListEvalCriteria", kReaders | kAgent,
       false},
      // Telemetry: written by agents; read back by agents and admins.
      {"/placement.v1.TelemetryService/UploadBenchmarkRun", kAgent | kAdmin,
       true},
      {"/placement.v1.TelemetryService/StreamStepSamples", kAgent | kAdmin,
       true},
      {"/placement.v1.TelemetryService/GetSampleProgress", kAgent | kAdmin,
       false},
      {"/placement.v1.TelemetryService/GetBenchmarkRun",
       kAgent | kPlanner | kAdmin, false},
      {"/placement.v1.TelemetryService/ListBenchmarkRuns",
       kAgent | kPlanner | kAdmin, false},
      {"/placement.v1.TelemetryService/ListEvalResults",
       kAgent | kPlanner | kAdmin, false},
      // Placement: planners; agents read a plan's bake-off.
      {"/placement.v1.PlacementService/PlacePlan", kPlanner | kAdmin, false},
      {"/placement.v1.PlacementService/GetPlan", kPlanner | kAgent | kAdmin,
       false},
      {"/placement.v1.PlacementService/GetBakeOffStatus",
       kPlanner | kAgent | kAdmin, false},
      {"/placement.v1.PlacementService/GetPlanAccuracy",
       kPlanner | kFinance | kAdmin, false},
      // Standards: decision records written and retired by operators (a
      // person answers for each; planners' tokens are held by platforms);
      // read by whoever plans or reports.
      {"/placement.v1.PlacementService/WriteStandard", kAdmin, true},
      {"/placement.v1.PlacementService/RetireStandard", kAdmin, true},
      {"/placement.v1.PlacementService/GetStandard", kReaders | kAgent, false},
      {"/placement.v1.PlacementService/ListStandards", kReaders | kAgent,
       false},
      // Pool state: reported by orchestrators' reporters (agents' tokens:
      // they write evidence, as uploads do; a planner's token held by a
      // platform asks, it does not report); read by whoever plans. A pool's
      // queue is the fleet's: only an unbound token reports it.
      {"/placement.v1.PoolStateService/ReportPoolState", kAgent | kAdmin, true,
       kFleet},
      {"/placement.v1.PoolStateService/GetPoolState", kReaders | kAgent, false},
      // Cost: finance.
      {"/placement.v1.CostService/GetCostReport", kFinance | kAdmin, false},
  };
  return *rules;
}

bool RoleMayCall(Role role, absl::string_view method) {
  for (const MethodRule& rule : MethodRules()) {
    if (rule.method == method) {
      return (rule.roles & static_cast<uint8_t>(role)) != 0;
    }
  }
  return false;
}

absl::Status CheckEveryMethodHasARule(
    const google::protobuf::ServiceDescriptor& service) {
  std::vector<std::string> unruled;
  for (int i = 0; i < service.method_count(); ++i) {
    const std::string method =
        absl::StrCat("/", service.full_name(), "/", service.method(i)->name());
    const bool ruled = std::any_of(
        MethodRules().begin(), MethodRules().end(),
        [&method](const MethodRule& rule) { return rule.method == method; });
    if (!ruled) unruled.push_back(method);
  }
  if (unruled.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      absl::StrJoin(unruled, ", "),
      " not in the access policy (services/auth/auth.cc, MethodRules): "
      "every RPC needs a rule before it is served"));
}

std::string NewTokenSecret() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) std::abort();  // no entropy
  return absl::StrCat(
      kSecretPrefix, absl::WebSafeBase64Escape(absl::string_view(
                         reinterpret_cast<const char*>(bytes), sizeof(bytes))));
}

std::string TokenSecretHash(absl::string_view secret) {
  return common::Sha256(secret);
}

Authorizer::Authorizer(const TokenDirectory& tokens, bool enabled,
                       double writes_per_second, double write_burst)
    : tokens_(tokens),
      enabled_(enabled),
      writes_per_second_(writes_per_second),
      write_burst_(std::max(1.0, write_burst)) {
  for (const MethodRule& rule : MethodRules()) rules_[rule.method] = &rule;
}

bool Authorizer::TakeWrite(const std::string& token_id) {
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  auto [it, inserted] =
      buckets_.try_emplace(token_id, Bucket{write_burst_, now});
  Bucket& bucket = it->second;
  bucket.tokens = std::min(
      write_burst_,
      bucket.tokens +
          writes_per_second_ * absl::ToDoubleSeconds(now - bucket.refilled));
  bucket.refilled = now;
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

absl::Status Authorizer::Authorize(absl::string_view method,
                                   const Metadata& metadata,
                                   std::optional<Principal>* caller) {
  auto rule = rules_.find(method);
  if (rule == rules_.end()) {
    return absl::PermissionDeniedError(
        absl::StrCat(method, " is not open to any role"));
  }
  auto header = metadata.find("authorization");
  if (header == metadata.end()) {
    return absl::UnauthenticatedError(
        "missing 'authorization: Bearer <token>' metadata");
  }
  absl::string_view value(header->second.data(), header->second.size());
  if (!absl::ConsumePrefix(&value, kBearer) || value.empty()) {
    return absl::UnauthenticatedError(
        "the authorization metadata must be 'Bearer <token>'");
  }
  absl::StatusOr<Principal> principal =
      tokens_.FindToken(TokenSecretHash(value));
  if (absl::IsNotFound(principal.status())) {
    return absl::UnauthenticatedError("unknown or revoked token");
  }
  if (!principal.ok()) return principal.status();
  *caller = *principal;
  if ((rule->second->roles & static_cast<uint8_t>(principal->role)) == 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "role ", RoleName(principal->role), " may not call ", method));
  }
  if (rule->second->fleet && !principal->teams.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "token '", principal->name, "' is bound to ",
        DescribeTeams(principal->teams), ": ", method,
        " acts on the whole fleet, which only an unbound token may"));
  }
  if (rule->second->write && !TakeWrite(principal->token_id)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("token '", principal->name, "' is over its rate of ",
                     writes_per_second_, " writes/s; retry with backoff"));
  }
  return absl::OkStatus();
}

Authorizer::DecisionShard& Authorizer::ShardOf(
    const grpc::ServerContextBase& context) {
  return decisions_[absl::HashOf(&context) % decisions_.size()];
}

void Authorizer::Decide(const grpc::ServerContextBase& context,
                        absl::string_view method, const Metadata& metadata) {
  if (!enabled_) return;
  std::optional<Principal> caller;
  absl::Status decision = Authorize(method, metadata, &caller);
  if (!decision.ok()) caller.reset();
  DecisionShard& shard = ShardOf(context);
  absl::MutexLock lock(&shard.mu);
  shard.calls.insert_or_assign(
      &context, DecisionShard::Decided{std::move(decision), std::move(caller)});
}

void Authorizer::Forget(const grpc::ServerContextBase& context) {
  if (!enabled_) return;
  DecisionShard& shard = ShardOf(context);
  absl::MutexLock lock(&shard.mu);
  shard.calls.erase(&context);
}

absl::Status Authorizer::Decision(const grpc::ServerContextBase& context) {
  if (!enabled_) return absl::OkStatus();
  DecisionShard& shard = ShardOf(context);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.calls.find(&context);
  if (it == shard.calls.end()) {
    return absl::PermissionDeniedError(
        "no authorization decision for this call");  // fail closed
  }
  return it->second.status;
}

std::optional<Principal> Authorizer::Caller(
    const grpc::ServerContextBase& context) {
  if (!enabled_) return std::nullopt;
  DecisionShard& shard = ShardOf(context);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.calls.find(&context);
  if (it == shard.calls.end()) return std::nullopt;
  return it->second.caller;
}

namespace {

// Decides each call as its metadata arrives, from the method gRPC is
// serving, and keeps the decision for the handler until the call ends.
class AuthInterceptor : public grpc::experimental::Interceptor {
 public:
  AuthInterceptor(Authorizer& auth, grpc::experimental::ServerRpcInfo* info)
      : auth_(auth), info_(info) {}
  ~AuthInterceptor() override { auth_.Forget(*info_->server_context()); }

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::
                POST_RECV_INITIAL_METADATA)) {
      auth_.Decide(*info_->server_context(), info_->method(),
                   *methods->GetRecvInitialMetadata());
    }
    methods->Proceed();
  }

 private:
  Authorizer& auth_;
  grpc::experimental::ServerRpcInfo* const info_;
};

class AuthInterceptorFactory
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit AuthInterceptorFactory(Authorizer& auth) : auth_(auth) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new AuthInterceptor(auth_, info);
  }

 private:
  Authorizer& auth_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
Authorizer::InterceptorFactory() {
  return std::make_unique<AuthInterceptorFactory>(*this);
}

}  // namespace placement::services
