#include "clients/placectl/eval_criteria_commands.h"

#include <iostream>
#include <optional>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/common/channel.h"
#include "clients/common/rpc_errors.h"
#include "clients/common/table.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/json.h"
#include "placement/v1/catalog.grpc.pb.h"

ABSL_DECLARE_FLAG(std::string, pool);
PLACECTL_FLAG_ALSO(pool, "eval-criteria set",
                   "the criterion holds for weights trained on this pool");
PLACECTL_FLAG(std::string, label, "", "eval-criteria set",
              "KEY=VALUE: the criterion holds for every pool with this label");
PLACECTL_FLAG(std::string, metric, "", "eval-criteria set",
              "the eval's metric name, e.g. exact_match");
PLACECTL_FLAG(std::string, min_score, "", "eval-criteria set",
              "a passing score is at least this (accuracy-like metrics)");
PLACECTL_FLAG(std::string, max_score, "", "eval-criteria set",
              "a passing score is at most this (loss-like metrics)");

namespace placement::placectl {
namespace {

using clients::ContextWithDeadline;
using clients::DescribeError;

int Fail(const grpc::Status& status) {
  std::cerr << "placectl: " << DescribeError(status) << "\n";
  return 1;
}

// An optional score flag: unset when empty; false when it is not a number.
bool ParseBound(const std::string& flag, const std::string& text,
                std::optional<double>* bound) {
  if (text.empty()) return true;
  double value = 0;
  if (!absl::SimpleAtod(text, &value)) {
    std::cerr << "placectl: --" << flag << ": expected a number, got '" << text
              << "'\n";
    return false;
  }
  *bound = value;
  return true;
}

std::string Bounds(const v1::EvalCriterion& c) {
  if (c.has_min_score() && c.has_max_score()) {
    return absl::StrFormat("%g <= score <= %g", c.min_score(), c.max_score());
  }
  if (c.has_min_score()) return absl::StrFormat(">= %g", c.min_score());
  return absl::StrFormat("<= %g", c.max_score());
}

std::string AppliesTo(const v1::EvalCriterion& c) {
  if (!c.pool().empty()) return absl::StrCat("pool ", c.pool());
  return absl::StrCat("label ", c.label_key(), "=", c.label_value());
}

int SetCriterion(v1::CatalogService::Stub& stub, const std::string& name) {
  v1::SetEvalCriterionRequest request;
  v1::EvalCriterion* c = request.mutable_criterion();
  c->set_name(name);
  c->set_pool(absl::GetFlag(FLAGS_pool));
  const std::string label = absl::GetFlag(FLAGS_label);
  if (!label.empty()) {
    const size_t eq = label.find('=');
    if (eq == std::string::npos) {
      std::cerr << "placectl: --label: expected KEY=VALUE\n";
      return 2;
    }
    c->set_label_key(label.substr(0, eq));
    c->set_label_value(label.substr(eq + 1));
  }
  c->set_metric_name(absl::GetFlag(FLAGS_metric));
  std::optional<double> min_score;
  std::optional<double> max_score;
  if (!ParseBound("min_score", absl::GetFlag(FLAGS_min_score), &min_score) ||
      !ParseBound("max_score", absl::GetFlag(FLAGS_max_score), &max_score)) {
    return 2;
  }
  if (min_score) c->set_min_score(*min_score);
  if (max_score) c->set_max_score(*max_score);
  v1::SetEvalCriterionResponse response;
  grpc::Status status =
      stub.SetEvalCriterion(ContextWithDeadline().get(), request, &response);
  if (!status.ok()) return Fail(status);
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(response);
  } else {
    const v1::EvalCriterion& set = response.criterion();
    std::cout << "eval criterion " << set.name() << ": " << set.metric_name()
              << " " << Bounds(set) << " for " << AppliesTo(set) << "\n";
  }
  return 0;
}

int DeleteCriterion(v1::CatalogService::Stub& stub, const std::string& name) {
  v1::DeleteEvalCriterionRequest request;
  request.set_name(name);
  v1::DeleteEvalCriterionResponse response;
  grpc::Status status =
      stub.DeleteEvalCriterion(ContextWithDeadline().get(), request, &response);
  if (!status.ok()) return Fail(status);
  std::cout << (response.deleted() ? "deleted " : "no criterion named ") << name
            << "\n";
  return 0;
}

int ListCriteria(v1::CatalogService::Stub& stub) {
  v1::ListEvalCriteriaResponse all;
  std::string page;
  do {
    v1::ListEvalCriteriaRequest request;
    request.set_page_token(page);
    v1::ListEvalCriteriaResponse response;
    grpc::Status status =
        stub.ListEvalCriteria(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) return Fail(status);
    for (const auto& c : response.criteria()) *all.add_criteria() = c;
    page = response.next_page_token();
  } while (!page.empty());
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(all);
    return 0;
  }
  clients::Table table({"NAME", "APPLIES TO", "METRIC", "PASSES WHEN"});
  for (const v1::EvalCriterion& c : all.criteria()) {
    table.AddRow({c.name(), AppliesTo(c), c.metric_name(), Bounds(c)});
  }
  table.Print(std::cout);
  return 0;
}

}  // namespace

int RunEvalCriteria(const std::vector<std::string>& args) {
  auto stub =
      v1::CatalogService::NewStub(clients::MakeChannel(ServerAddress()));
  if (args.size() == 1 && args[0] == "list") return ListCriteria(*stub);
  if (args.size() == 2 && args[0] == "set") return SetCriterion(*stub, args[1]);
  if (args.size() == 2 && args[0] == "delete") {
    return DeleteCriterion(*stub, args[1]);
  }
  std::cerr << "usage: placectl eval-criteria list | set NAME (--pool P | "
               "--label K=V) --metric M [--min_score X] [--max_score Y] | "
               "delete NAME\n";
  return 2;
}

}  // namespace placement::placectl
