#include "clients/placectl/standard_commands.h"

#include <iostream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "clients/common/channel.h"
#include "clients/common/rpc_errors.h"
#include "clients/common/table.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/json.h"
#include "placement/v1/placement.grpc.pb.h"

ABSL_DECLARE_FLAG(std::string, pool);
ABSL_DECLARE_FLAG(std::string, request_id);
ABSL_DECLARE_FLAG(std::string, team);
PLACECTL_FLAG(std::string, plan, "", "standards write",
              "the plan whose bake-off proves the standard");
PLACECTL_FLAG_ALSO(pool, "standards write",
                   "the pool the standard places the recipe class on");
PLACECTL_FLAG(std::string, reason, "", "standards write|standards retire",
              "why (required)");
PLACECTL_FLAG_ALSO(request_id, "standards write",
                   "idempotency key (default: one per plan and pool, so a "
                   "repeated command writes once)");
PLACECTL_FLAG_ALSO(team, "standards write", "the team that owns it");
PLACECTL_FLAG(bool, all, false, "standards list", "retired standards too");

namespace placement::placectl {
namespace {

using clients::ContextWithDeadline;
using clients::DescribeError;

constexpr char kUsage[] =
    "placectl standards list [--all] | get ID | write --plan PLAN --pool "
    "POOL --reason TEXT [--team T] [--request_id K] | retire ID --reason TEXT";

std::string Time(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M", absl::FromUnixSeconds(t.seconds()),
                          absl::UTCTimeZone());
}

// The class's set fields, e.g. "meta-llama/Llama-3.1-8B lora r16 seq 2048
// bf16".
std::string ClassText(const v1::Recipe& c) {
  std::string text = c.model();
  if (c.method() != v1::FINE_TUNE_METHOD_UNSPECIFIED) {
    absl::StrAppend(
        &text, " ",
        absl::AsciiStrToLower(absl::StripPrefix(
            v1::FineTuneMethod_Name(c.method()), "FINE_TUNE_METHOD_")));
  }
  if (c.lora_rank() > 0) absl::StrAppend(&text, " r", c.lora_rank());
  if (c.sequence_length() > 0) {
    absl::StrAppend(&text, " seq ", c.sequence_length());
  }
  if (c.micro_batch_size() > 0) {
    absl::StrAppend(&text, " mb ", c.micro_batch_size());
  }
  if (c.precision() != v1::PRECISION_UNSPECIFIED) {
    absl::StrAppend(&text, " ",
                    absl::AsciiStrToLower(absl::StripPrefix(
                        v1::Precision_Name(c.precision()), "PRECISION_")));
  }
  if (c.gpu_count() > 0) absl::StrAppend(&text, " x", c.gpu_count());
  return text;
}

int Fail(const grpc::Status& status) {
  std::cerr << "placectl: " << DescribeError(status) << "\n";
  return 1;
}

int Print(const v1::Standard& s) {
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(s);
    return 0;
  }
  std::cout << "standard " << s.standard_id()
            << (s.active() ? "" : " (retired)")
            << "\n  class:      " << ClassText(s.recipe_class())
            << "\n  pool:       " << s.pool() << " (" << s.sku() << ")"
            << "\n  written by: " << s.written_by()
            << (s.team().empty() ? "" : absl::StrCat(", team ", s.team()))
            << " at " << Time(s.create_time())
            << "\n  reason:     " << s.reason() << "\n  proven by:  plan "
            << s.plan_id()
            << absl::StrFormat(
                   "\n  evidence:   %.6f-%.6f per successful step; failures "
                   "%.4f-%.4f an hour",
                   s.cost_micros_per_successful_step_band().low() / 1e6,
                   s.cost_micros_per_successful_step_band().high() / 1e6,
                   s.failure_rate_per_hour_band().low(),
                   s.failure_rate_per_hour_band().high())
            << "\n";
  if (!s.active()) {
    std::cout << "  retired:    " << Time(s.retire_time()) << " by "
              << s.retired_by() << ": " << s.retire_reason() << "\n";
  }
  return 0;
}

int List(v1::PlacementService::Stub& stub) {
  v1::ListStandardsRequest request;
  request.set_include_retired(absl::GetFlag(FLAGS_all));
  clients::Table table({"ID", "CLASS", "POOL", "WRITTEN", "BY", "STATE"});
  v1::ListStandardsResponse all;
  do {
    v1::ListStandardsResponse page;
    grpc::Status status =
        stub.ListStandards(ContextWithDeadline().get(), request, &page);
    if (!status.ok()) return Fail(status);
    for (const v1::Standard& s : page.standards()) {
      *all.add_standards() = s;
      table.AddRow({s.standard_id(), ClassText(s.recipe_class()), s.pool(),
                    Time(s.create_time()), s.written_by(),
                    s.active() ? "active" : "retired"});
    }
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(all);
    return 0;
  }
  table.Print(std::cout);
  if (all.standards().empty()) std::cout << "(no standard)\n";
  return 0;
}

int Write(v1::PlacementService::Stub& stub) {
  v1::WriteStandardRequest request;
  request.set_plan_id(absl::GetFlag(FLAGS_plan));
  request.set_pool(absl::GetFlag(FLAGS_pool));
  request.set_reason(absl::GetFlag(FLAGS_reason));
  request.set_team(absl::GetFlag(FLAGS_team));
  request.set_request_id(
      absl::GetFlag(FLAGS_request_id).empty()
          ? absl::StrCat("placectl:", request.plan_id(), ":", request.pool())
          : absl::GetFlag(FLAGS_request_id));
  v1::WriteStandardResponse response;
  grpc::Status status =
      stub.WriteStandard(ContextWithDeadline().get(), request, &response);
  if (!status.ok()) return Fail(status);
  return Print(response.standard());
}

}  // namespace

int RunStandards(const std::vector<std::string>& args) {
  auto stub =
      v1::PlacementService::NewStub(clients::MakeChannel(ServerAddress()));
  if (args.size() == 1 && args[0] == "list") return List(*stub);
  if (args.size() == 1 && args[0] == "write") return Write(*stub);
  if (args.size() == 2 && args[0] == "get") {
    v1::GetStandardRequest request;
    request.set_standard_id(args[1]);
    v1::GetStandardResponse response;
    grpc::Status status =
        stub->GetStandard(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) return Fail(status);
    return Print(response.standard());
  }
  if (args.size() == 2 && args[0] == "retire") {
    v1::RetireStandardRequest request;
    request.set_standard_id(args[1]);
    request.set_reason(absl::GetFlag(FLAGS_reason));
    v1::RetireStandardResponse response;
    grpc::Status status =
        stub->RetireStandard(ContextWithDeadline().get(), request, &response);
    if (!status.ok()) return Fail(status);
    return Print(response.standard());
  }
  std::cerr << "usage: " << kUsage << "\n";
  return 2;
}

}  // namespace placement::placectl
