#include "clients/placectl/bakeoff_commands.h"

#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/common/channel.h"
#include "clients/common/rpc_errors.h"
#include "clients/common/table.h"
#include "clients/placectl/flags.h"
#include "clients/placectl/json.h"
#include "placement/v1/placement.grpc.pb.h"

namespace placement::placectl {
namespace {

constexpr char kUsage[] = "placectl bakeoff PLAN_ID status [--json]";

std::string Money(double micros) {
  return absl::StrFormat("%.6f", micros / 1e6);
}

void PrintRuns(const v1::GetBakeOffStatusResponse& r, std::ostream& out) {
  clients::Table table({"POOL", "SKU", "GPUS", "STEPS", "UPLOADS", "LATEST"},
                       {false, false, true, true, true, false});
  for (const v1::BakeOffRunStatus& run : r.runs()) {
    std::string latest = "-";
    if (!run.uploads().empty()) {
      const v1::BakeOffUpload& u = run.uploads(0);
      latest =
          u.succeeded()
              ? absl::StrFormat("%s succeeded, %d steps", u.run_id(),
                                u.steps_succeeded())
              : absl::StrCat(u.run_id(), " ", v1::RunOutcome_Name(u.outcome()),
                             u.failure_reason().empty() ? "" : ": ",
                             u.failure_reason());
    }
    table.AddRow({run.run().pool(), run.run().sku(),
                  absl::StrCat(run.run().gpu_count()),
                  absl::StrCat(run.run().steps()),
                  absl::StrCat(run.uploads_size()), latest});
  }
  table.Print(out);
}

void PrintVerdict(const v1::BakeOffVerdict& v, std::ostream& out) {
  clients::Table table(
      {"POOL", "SKU", "RUNS", "OK", "COST/STEP", "BAND", "GPU-H/STEP",
       "PEAK GB", "IDLE GB", "EVAL", "ELIGIBLE"},
      {false, false, true, true, true, false, true, true, true, false, false});
  for (const v1::BakeOffPoolVerdict& p : v.pools()) {
    table.AddRow(
        {p.pool() + (p.first_choice() ? " (first choice)" : ""), p.sku(),
         absl::StrCat(p.runs()), absl::StrCat(p.runs_succeeded()),
         Money(p.cost_micros_per_successful_step()),
         absl::StrCat(Money(p.cost_micros_per_successful_step_band().low()),
                      "-",
                      Money(p.cost_micros_per_successful_step_band().high())),
         absl::StrFormat("%.3g", p.gpu_hours_per_successful_step()),
         absl::StrFormat("%.1f", p.peak_memory_gb()),
         p.over_bought() ? absl::StrFormat("%.0f", p.idle_memory_gb()) : "-",
         !p.has_eval_status() ? "-"
                              : (p.eval_status().met() ? "met" : "missing"),
         p.eligible() ? "yes" : "no"});
  }
  table.Print(out);
  for (const v1::BakeOffPoolVerdict& p : v.pools()) {
    for (const std::string& finding : p.findings()) {
      out << "  " << p.pool() << ": " << finding << "\n";
    }
  }
  out << "verdict: " << v.summary() << "\n";
}

}  // namespace

int RunBakeOff(const std::vector<std::string>& args) {
  if (args.size() != 2 || args[1] != "status") {
    std::cerr << "usage: " << kUsage << "\n";
    return 2;
  }
  auto stub =
      v1::PlacementService::NewStub(clients::MakeChannel(ServerAddress()));
  v1::GetBakeOffStatusRequest request;
  request.set_plan_id(args[0]);
  v1::GetBakeOffStatusResponse response;
  const grpc::Status status = stub->GetBakeOffStatus(
      clients::ContextWithDeadline().get(), request, &response);
  if (!status.ok()) {
    std::cerr << "placectl: " << clients::DescribeError(status) << "\n";
    return 1;
  }
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ToJson(response);
    return 0;
  }
  std::cout << "bake-off of plan " << response.plan_id() << ": "
            << response.progress() << "\n";
  if (!response.reason().empty()) std::cout << response.reason() << "\n";
  if (!response.runs().empty()) PrintRuns(response, std::cout);
  if (response.has_verdict()) PrintVerdict(response.verdict(), std::cout);
  return 0;
}

}  // namespace placement::placectl
