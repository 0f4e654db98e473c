#ifndef PLACEMENT_STORAGE_EVAL_CRITERIA_STORE_H_
#define PLACEMENT_STORAGE_EVAL_CRITERIA_STORE_H_

// The declared eval pass criteria (eval_criteria, migration 0020): written by
// CatalogService, read whole by every replica's catalog refresh. The
// snapshot's read works on a schema before 0020 too, where there are none;
// the RPCs' writes and listing answer FAILED_PRECONDITION there
// (SchemaLacks).

#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/evidence/eval_criterion.h"
#include "storage/session/db_session.h"

namespace placement::storage {

struct EvalCriterionRecord {
  core::EvalCriterion criterion;
  absl::Time update_time;
};

// Creates the criterion, or replaces the one with its name. NOT_FOUND when
// it names a pool that does not exist.
absl::StatusOr<EvalCriterionRecord> SetEvalCriterion(
    DbSession& session, const core::EvalCriterion& criterion);

// Whether a criterion had that name (and is now gone).
absl::StatusOr<bool> DeleteEvalCriterion(DbSession& session,
                                         const std::string& name);

struct EvalCriterionPage {
  std::vector<EvalCriterionRecord> criteria;
  bool more = false;  // whether criteria after the last one exist
};

// Up to `page_size` criteria whose names sort after `after_name`.
absl::StatusOr<EvalCriterionPage> ListEvalCriteria(
    DbSession& session, int page_size, const std::string& after_name);

// Every criterion, in name order; none before 0020.
std::vector<core::EvalCriterion> ReadEvalCriteria(pqxx::transaction_base& txn);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_EVAL_CRITERIA_STORE_H_
