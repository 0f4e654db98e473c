#ifndef PLACEMENT_SERVICES_API_COST_REQUEST_H_
#define PLACEMENT_SERVICES_API_COST_REQUEST_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/field_violation.h"
#include "core/sku.h"
#include "placement/v1/cost.pb.h"
#include "storage/records/cost_records.h"

namespace placement::services {

// A GetCostReport request that passed validation: the query and where its
// page starts.
struct CostRequest {
  storage::CostQuery query;
  std::optional<storage::CostGroupKey> after;
  int page_size = 0;
  std::string fingerprint;  // of range, filter and grouping
};

// Every check of a cost report request that needs no database: the range
// (two UTC midnights, start before end), the filter's names and enums, the
// grouping (known dimensions, none repeated, at most one period), the page
// size and the page token (one made for this same request). INVALID_ARGUMENT
// with a violation naming each bad field ("filter.methods[0]",
// "group_by[1]", "page_token").
absl::StatusOr<CostRequest> ValidateCostRequest(
    const v1::GetCostReportRequest& request);

// The SKU filter names cards exactly (the guide's first rule): "A100" is
// refused with the exact candidates ("filter.skus[i]").
core::FieldViolations CheckCostSkus(const std::vector<std::string>& skus,
                                    const std::vector<core::GpuSku>& catalog);

// The request's range, filter and grouping, hashed (FNV-1a, unsalted: stable
// across processes and replicas, so that a page token made by one replica
// is checked by another). The page size and token are left out.
std::string CostRequestFingerprint(const v1::GetCostReportRequest& request);

// The page token that resumes after `last` (the key of a page's last row)
// for the request of `fingerprint`.
std::string CostPageToken(const std::string& fingerprint,
                          const storage::CostGroupKey& last);

// The key a page token resumes after: nullopt for an empty token (the first
// page), INVALID_ARGUMENT on "page_token" for a token that does not decode
// or was made for another request (another fingerprint).
absl::StatusOr<std::optional<storage::CostGroupKey>> CostCursorFromPageToken(
    const std::string& fingerprint, const std::string& page_token);

// The answer of one page: its rows and, when more follow, the next page's
// token.
void CostPageToProto(const storage::CostPage& page, const CostRequest& request,
                     v1::GetCostReportResponse* response);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_COST_REQUEST_H_
