#include "services/rpc/catalog_service.h"

#include <iostream>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/proto_time.h"
#include "common/uuid.h"
#include "core/field_violation.h"
#include "core/pool.h"
#include "core/sku.h"
#include "services/api/catalog_convert.h"
#include "services/api/eval_criterion_convert.h"
#include "services/api/grpc_status.h"
#include "services/api/page_token.h"
#include "services/api/run_validation.h"
#include "services/api/token_convert.h"
#include "services/rpc/admit.h"
#include "services/rpc/db_call.h"
#include "services/rpc/readings.h"
#include "storage/stores/eval_criteria_store.h"
#include "storage/stores/pool_store.h"
#include "storage/stores/sku_store.h"
#include "storage/stores/token_store.h"

namespace placement::services {
namespace {

constexpr size_t kMaxRequestIdLength = 128;

// Fields of a pool that UpdatePool may change; name and SKU are fixed.
const std::set<std::string>& MutablePoolFields() {
  static const auto* const fields = new std::set<std::string>{
      "node_count",
      "gpus_per_node",
      "fabric",
      "inter_node_fabric",
      "inter_node_bandwidth_gb_s_per_gpu",
      "purpose",
      "exclusive",
      "gpu_quota",
      "internal_rate_micros_per_gpu_hour",
      "list_price_micros_per_gpu_hour",
      "labels",
  };
  return *fields;
}

// Resolves the pool's SKU name against the catalog (exact names only) and
// validates every field. Returns the pool with the catalog's SKU spelling.
absl::StatusOr<core::Pool> ResolvedAndValidated(
    core::Pool pool, const std::vector<core::GpuSku>& catalog) {
  absl::StatusOr<core::GpuSku> sku = core::ResolveSku(pool.sku_id, catalog);
  if (!sku.ok()) {
    return core::InvalidArgumentWithViolations(
        {{"pool.sku", std::string(sku.status().message())}});
  }
  pool.sku_id = sku->id;
  core::FieldViolations violations = core::ValidatePool(pool, *sku, "pool.");
  if (!violations.empty()) {
    return core::InvalidArgumentWithViolations(violations);
  }
  return pool;
}

void ApplyField(const std::string& field, const core::Pool& from,
                core::Pool& to) {
  if (field == "node_count") to.node_count = from.node_count;
  if (field == "gpus_per_node") to.gpus_per_node = from.gpus_per_node;
  if (field == "fabric") to.fabric = from.fabric;
  if (field == "inter_node_fabric") {
    to.inter_node_fabric = from.inter_node_fabric;
  }
  if (field == "inter_node_bandwidth_gb_s_per_gpu") {
    to.inter_node_gb_s_per_gpu = from.inter_node_gb_s_per_gpu;
  }
  if (field == "purpose") to.purpose = from.purpose;
  if (field == "exclusive") to.exclusive = from.exclusive;
  if (field == "gpu_quota") to.gpu_quota = from.gpu_quota;
  if (field == "internal_rate_micros_per_gpu_hour") {
    to.internal_rate_micros_per_gpu_hour =
        from.internal_rate_micros_per_gpu_hour;
  }
  if (field == "list_price_micros_per_gpu_hour") {
    to.list_price_micros_per_gpu_hour = from.list_price_micros_per_gpu_hour;
  }
  if (field == "labels") to.labels = from.labels;
}

}  // namespace

grpc::ServerUnaryReactor* CatalogService::ListSkus(
    grpc::CallbackServerContext* context, const v1::ListSkusRequest* request,
    v1::ListSkusResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  absl::StatusOr<PageRequest> page =
      ParsePageRequest(request->page_size(), request->page_token());
  if (!page.ok()) return FinishNow(context, ToGrpcStatus(page.status()));

  return FinishOnDbWorker(
      context, workers_,
      [response, page_size = page->size,
       after = page->after](storage::DbSession& session) -> absl::Status {
        absl::StatusOr<std::vector<core::GpuSku>> skus =
            storage::ListSkus(session);
        if (!skus.ok()) return skus.status();
        for (const core::GpuSku& sku : *skus) {
          if (sku.id <= after) continue;
          if (response->skus_size() == page_size) {
            response->set_next_page_token(
                EncodePageToken(response->skus(page_size - 1).name()));
            break;
          }
          *response->add_skus() = SkuToProto(sku);
        }
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CatalogService::GetSku(
    grpc::CallbackServerContext* context, const v1::GetSkuRequest* request,
    v1::GetSkuResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (request->name().empty()) {
    return FinishNow(context, InvalidArgument({{"name", "is required"}}));
  }
  return FinishOnDbWorker(
      context, workers_,
      [response,
       name = request->name()](storage::DbSession& session) -> absl::Status {
        absl::StatusOr<std::vector<core::GpuSku>> skus =
            storage::ListSkus(session);
        if (!skus.ok()) return skus.status();
        absl::StatusOr<core::GpuSku> sku = core::ResolveSku(name, *skus);
        if (sku.status().code() == absl::StatusCode::kInvalidArgument) {
          return core::InvalidArgumentWithViolations(
              {{"name", std::string(sku.status().message())}});
        }
        if (!sku.ok()) return sku.status();
        *response->mutable_sku() = SkuToProto(*sku);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CatalogService::CreatePool(
    grpc::CallbackServerContext* context, const v1::CreatePoolRequest* request,
    v1::CreatePoolResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (!request->has_pool()) {
    return FinishNow(context, InvalidArgument({{"pool", "is required"}}));
  }
  if (request->request_id().size() > kMaxRequestIdLength) {
    return FinishNow(
        context, InvalidArgument({{"request_id",
                                   absl::StrCat("at most ", kMaxRequestIdLength,
                                                " characters")}}));
  }
  return FinishOnDbWorker(
      context, workers_,
      [this, response, pool = PoolFromProto(request->pool()),
       request_id =
           request->request_id()](storage::DbSession& session) -> absl::Status {
        absl::StatusOr<std::vector<core::GpuSku>> skus =
            storage::ListSkus(session);
        if (!skus.ok()) return skus.status();
        absl::StatusOr<core::Pool> valid = ResolvedAndValidated(pool, *skus);
        if (!valid.ok()) return valid.status();
        absl::StatusOr<storage::PoolRecord> created =
            storage::CreatePool(session, *valid, request_id);
        if (!created.ok()) return created.status();
        PublishChange(session);
        *response->mutable_pool() = PoolToProto(
            created->pool, created->create_time, created->update_time);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CatalogService::UpdatePool(
    grpc::CallbackServerContext* context, const v1::UpdatePoolRequest* request,
    v1::UpdatePoolResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (!request->has_pool() || request->pool().name().empty()) {
    return FinishNow(context, InvalidArgument({{"pool.name", "is required"}}));
  }
  std::vector<std::string> fields;
  for (const std::string& path : request->update_mask().paths()) {
    if (!MutablePoolFields().contains(path)) {
      return FinishNow(
          context,
          InvalidArgument(
              {{"update_mask",
                absl::StrCat("'", path,
                             "' cannot be updated; updatable fields: ",
                             absl::StrJoin(MutablePoolFields(), ", "),
                             " (a pool's SKU is fixed: create a new pool)")}}));
    }
    fields.push_back(path);
  }
  if (fields.empty()) {
    fields.assign(MutablePoolFields().begin(), MutablePoolFields().end());
  }
  return FinishOnDbWorker(
      context, workers_,
      [this, response, requested = PoolFromProto(request->pool()),
       fields =
           std::move(fields)](storage::DbSession& session) -> absl::Status {
        absl::StatusOr<std::vector<core::GpuSku>> skus =
            storage::ListSkus(session);
        if (!skus.ok()) return skus.status();
        absl::StatusOr<storage::PoolRecord> updated = storage::UpdatePool(
            session, requested.name, [&](core::Pool& pool) -> absl::Status {
              for (const std::string& field : fields) {
                ApplyField(field, requested, pool);
              }
              absl::StatusOr<core::Pool> valid =
                  ResolvedAndValidated(pool, *skus);
              if (!valid.ok()) return valid.status();
              pool = *std::move(valid);
              return absl::OkStatus();
            });
        if (!updated.ok()) return updated.status();
        PublishChange(session);
        *response->mutable_pool() = PoolToProto(
            updated->pool, updated->create_time, updated->update_time);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CatalogService::GetPool(
    grpc::CallbackServerContext* context, const v1::GetPoolRequest* request,
    v1::GetPoolResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (request->name().empty()) {
    return FinishNow(context, InvalidArgument({{"name", "is required"}}));
  }
  return FinishOnDbWorker(context, workers_,
                          [response, name = request->name()](
                              storage::DbSession& session) -> absl::Status {
                            absl::StatusOr<v1::GetPoolResponse> pool =
                                ReadPool(session, name);
                            if (!pool.ok()) return pool.status();
                            *response = *std::move(pool);
                            return absl::OkStatus();
                          });
}

grpc::ServerUnaryReactor* CatalogService::ListPools(
    grpc::CallbackServerContext* context, const v1::ListPoolsRequest* request,
    v1::ListPoolsResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  absl::StatusOr<PageRequest> page =
      ParsePageRequest(request->page_size(), request->page_token());
  if (!page.ok()) return FinishNow(context, ToGrpcStatus(page.status()));
  return FinishOnDbWorker(
      context, workers_,
      [response, page = *page](storage::DbSession& session) -> absl::Status {
        absl::StatusOr<v1::ListPoolsResponse> pools = ReadPools(session, page);
        if (!pools.ok()) return pools.status();
        *response = *std::move(pools);
        return absl::OkStatus();
      });
}

namespace {

// Token page tokens carry the last token's (create time, token id).
std::string TokenCursorKey(const storage::TokenRecord& token) {
  return TimeIdKeyText(token.created_at, token.token_id);
}

absl::StatusOr<storage::TokenCursor> TokenCursorFromKey(
    const std::string& key) {
  if (key.empty()) return storage::TokenCursor{};
  absl::StatusOr<TimeIdKey> last = ParseTimeIdKey(key);
  if (!last.ok()) return last.status();
  return storage::TokenCursor{last->time, last->id};
}

}  // namespace

grpc::ServerUnaryReactor* CatalogService::CreateToken(
    grpc::CallbackServerContext* context, const v1::CreateTokenRequest* request,
    v1::CreateTokenResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  core::FieldViolations violations;
  if (request->name().empty() || request->name().size() > 128) {
    violations.push_back({"name", "must be 1-128 characters"});
  }
  const std::optional<Role> role = RoleFromProto(request->role());
  if (!role.has_value()) {
    violations.push_back({"role", "must be AGENT, PLANNER, FINANCE or ADMIN"});
  }
  std::vector<std::string> teams =
      TokenTeamsFromProto(request->teams(), &violations);
  if (!violations.empty())
    return FinishNow(context, InvalidArgument(violations));
  storage::TokenRecord token;
  token.token_id = common::NewUuid();
  token.name = request->name();
  token.role = RoleName(*role);
  token.teams = std::move(teams);
  const std::string secret = NewTokenSecret();
  token.secret_hash = TokenSecretHash(secret);
  return FinishOnDbWorker(
      context, workers_,
      [this, response, token,
       secret](storage::DbSession& session) -> absl::Status {
        if (absl::Status s = storage::InsertToken(session, token); !s.ok()) {
          return s;
        }
        PublishChange(session);
        storage::TokenRecord created = token;
        created.created_at = absl::Now();
        *response->mutable_token() = TokenToProto(created);
        response->set_secret(secret);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CatalogService::RevokeToken(
    grpc::CallbackServerContext* context, const v1::RevokeTokenRequest* request,
    v1::RevokeTokenResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (!IsUuid(request->token_id())) {
    return FinishNow(context,
                     InvalidArgument({{"token_id", "must be a UUID"}}));
  }
  return FinishOnDbWorker(
      context, workers_,
      [this, response, token_id = absl::AsciiStrToLower(request->token_id())](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<storage::TokenRecord> revoked =
            storage::RevokeToken(session, token_id);
        if (!revoked.ok()) return revoked.status();
        PublishChange(session);
        *response->mutable_token() = TokenToProto(*revoked);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CatalogService::ListTokens(
    grpc::CallbackServerContext* context, const v1::ListTokensRequest* request,
    v1::ListTokensResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  absl::StatusOr<PageRequest> page =
      ParsePageRequest(request->page_size(), request->page_token());
  if (!page.ok()) return FinishNow(context, ToGrpcStatus(page.status()));
  absl::StatusOr<storage::TokenCursor> cursor = TokenCursorFromKey(page->after);
  if (!cursor.ok()) return FinishNow(context, ToGrpcStatus(cursor.status()));
  return FinishOnDbWorker(
      context, workers_,
      [response, page_size = page->size, cursor = *std::move(cursor)](
          storage::DbSession& session) -> absl::Status {
        // Newest first; the page token is the last token's key, so tokens
        // created between pages shift nothing.
        absl::StatusOr<storage::TokenPage> tokens =
            storage::ListTokensPage(session, cursor, page_size);
        if (!tokens.ok()) return tokens.status();
        for (const storage::TokenRecord& token : tokens->tokens) {
          *response->add_tokens() = TokenToProto(token);
        }
        if (tokens->more) {
          response->set_next_page_token(
              EncodePageToken(TokenCursorKey(tokens->tokens.back())));
        }
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CatalogService::SetEvalCriterion(
    grpc::CallbackServerContext* context,
    const v1::SetEvalCriterionRequest* request,
    v1::SetEvalCriterionResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (!request->has_criterion()) {
    return FinishNow(context, InvalidArgument({{"criterion", "is required"}}));
  }
  core::EvalCriterion criterion = EvalCriterionFromProto(request->criterion());
  core::FieldViolations violations =
      core::ValidateEvalCriterion(criterion, "criterion.");
  if (!violations.empty()) {
    return FinishNow(context, InvalidArgument(violations));
  }
  return FinishOnDbWorker(
      context, workers_,
      [this, response, criterion = std::move(criterion)](
          storage::DbSession& session) -> absl::Status {
        absl::StatusOr<storage::EvalCriterionRecord> written =
            storage::SetEvalCriterion(session, criterion);
        if (!written.ok()) return written.status();
        PublishChange(session);
        *response->mutable_criterion() =
            EvalCriterionToProto(written->criterion, written->update_time);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CatalogService::ListEvalCriteria(
    grpc::CallbackServerContext* context,
    const v1::ListEvalCriteriaRequest* request,
    v1::ListEvalCriteriaResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  absl::StatusOr<PageRequest> page =
      ParsePageRequest(request->page_size(), request->page_token());
  if (!page.ok()) return FinishNow(context, ToGrpcStatus(page.status()));
  return FinishOnDbWorker(
      context, workers_,
      [response, page_size = page->size,
       after = page->after](storage::DbSession& session) -> absl::Status {
        absl::StatusOr<storage::EvalCriterionPage> page =
            storage::ListEvalCriteria(session, page_size, after);
        if (!page.ok()) return page.status();
        for (const storage::EvalCriterionRecord& record : page->criteria) {
          *response->add_criteria() =
              EvalCriterionToProto(record.criterion, record.update_time);
        }
        if (page->more) {
          response->set_next_page_token(
              EncodePageToken(page->criteria.back().criterion.name));
        }
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CatalogService::DeleteEvalCriterion(
    grpc::CallbackServerContext* context,
    const v1::DeleteEvalCriterionRequest* request,
    v1::DeleteEvalCriterionResponse* response) {
  if (absl::Status admitted = Admit(auth_, *context, *request);
      !admitted.ok()) {
    return FinishNow(context, ToGrpcStatus(admitted));
  }
  if (!core::IsValidPoolName(request->name())) {
    return FinishNow(context,
                     InvalidArgument({{"name", "is not a criterion's name"}}));
  }
  return FinishOnDbWorker(context, workers_,
                          [this, response, name = request->name()](
                              storage::DbSession& session) -> absl::Status {
                            absl::StatusOr<bool> deleted =
                                storage::DeleteEvalCriterion(session, name);
                            if (!deleted.ok()) return deleted.status();
                            if (*deleted) PublishChange(session);
                            response->set_deleted(*deleted);
                            return absl::OkStatus();
                          });
}

void CatalogService::PublishChange(storage::DbSession& session) {
  if (evidence_ == nullptr) return;
  // This replica's next plan sees the change at once (its own read, on the
  // session that committed it); the others re-read when notified. The change
  // is committed either way: if this read fails, the cache's own re-read
  // (NoteLocalChange, the notification, the poll) picks it up.
  if (absl::Status reloaded = evidence_->ReloadWith(session); !reloaded.ok()) {
    std::cerr << "placementd: catalog change committed; the cache re-reads "
                 "it later (immediate reload failed: "
              << reloaded << ")\n";
  }
  evidence_->NoteLocalChange();
}

}  // namespace placement::services
