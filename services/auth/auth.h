#ifndef PLACEMENT_SERVICES_AUTH_AUTH_H_
#define PLACEMENT_SERVICES_AUTH_AUTH_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "services/auth/principal.h"
#include "services/auth/token_directory.h"

namespace placement::services {

// The one table of the service's access policy: every RPC of placement.v1
// with the roles that may call it. Methods not in the table are refused
// (health and reflection are left open before this table is consulted).
// What a token bound to teams may reach inside an allowed call is decided
// by its handler, through services/auth/team_access.h.
struct MethodRule {
  const char* method;  // "/placement.v1.CatalogService/ListSkus"
  uint8_t roles;       // a set of Role bits
  bool write;          // counted against the per-token write rate
  // Acts on what belongs to the whole fleet and to no team (pools, tokens,
  // eval criteria): refused to a token bound to teams.
  bool fleet = false;
};
const std::vector<MethodRule>& MethodRules();

// Whether MethodRules() lets `role` call `method` (gRPC's full name); false
// for a method the table does not name. Other readers of the service's data
// (the web console) decide by the same table.
bool RoleMayCall(Role role, absl::string_view method);

// OK when MethodRules() names every method of `service`; else
// FAILED_PRECONDITION naming each method it does not. The server checks
// every service so before serving it (fail closed: a new RPC without a rule
// keeps placementd from starting; one reached anyway is refused by the
// Authorizer, since no role may call a method the table does not name).
absl::Status CheckEveryMethodHasARule(
    const google::protobuf::ServiceDescriptor& service);

// "plc_" + 43 characters: 256 random bits, web-safe base64.
std::string NewTokenSecret();
// SHA-256 of a secret, as stored.
std::string TokenSecretHash(absl::string_view secret);

// Decides every call once, from the method gRPC is serving: the bearer token
// in the `authorization` metadata must be known and unrevoked in `tokens`
// (the replica's snapshot: revocations arrive with the next re-read, within
// a second on every replica), its role must be allowed by MethodRules() for
// that method, and writes are limited per token. MethodRules() is the only
// place that names methods: the interceptor (InterceptorFactory) decides as
// the call's metadata arrives, and the handler asks for the decision.
//
// A decision is OK, UNAUTHENTICATED (no or unknown token), PERMISSION_DENIED
// (wrong role, a fleet-wide method for a token bound to teams, or a call
// nothing decided), RESOURCE_EXHAUSTED (write rate)
// or UNAVAILABLE (tokens not loaded yet). With auth disabled every call is
// allowed.
class Authorizer {
 public:
  using Metadata = std::multimap<grpc::string_ref, grpc::string_ref>;

  Authorizer(const TokenDirectory& tokens, bool enabled,
             double writes_per_second, double write_burst);

  // The interceptor that decides each call (register it with the server).
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  InterceptorFactory();

  // The decision on the call of `context`, for its handler.
  absl::Status Decision(const grpc::ServerContextBase& context);
  // Who made the call of `context`, once it was allowed; nullopt with auth
  // disabled (or for a call not decided or refused).
  std::optional<Principal> Caller(const grpc::ServerContextBase& context);

  // The interceptor's side: decides a call of `method` (gRPC's full name,
  // "/placement.v1.CatalogService/ListSkus") presenting `metadata`, and
  // keeps the decision until Forget().
  void Decide(const grpc::ServerContextBase& context, absl::string_view method,
              const Metadata& metadata);
  void Forget(const grpc::ServerContextBase& context);

  bool enabled() const { return enabled_; }

 private:
  // Sets `*caller` when the token resolves.
  absl::Status Authorize(absl::string_view method, const Metadata& metadata,
                         std::optional<Principal>* caller);

  // Token bucket per token id.
  struct Bucket {
    double tokens;
    absl::Time refilled;
  };
  bool TakeWrite(const std::string& token_id);

  const TokenDirectory& tokens_;
  const bool enabled_;
  const double writes_per_second_;
  const double write_burst_;
  absl::flat_hash_map<std::string, const MethodRule*> rules_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
  // The decisions of calls in flight, sharded by call so that concurrent
  // calls seldom share a lock.
  struct DecisionShard {
    absl::Mutex mu;
    struct Decided {
      absl::Status status;
      std::optional<Principal> caller;
    };
    absl::flat_hash_map<const grpc::ServerContextBase*, Decided> calls
        ABSL_GUARDED_BY(mu);
  };
  DecisionShard& ShardOf(const grpc::ServerContextBase& context);
  std::array<DecisionShard, 16> decisions_;
};

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_AUTH_AUTH_H_
