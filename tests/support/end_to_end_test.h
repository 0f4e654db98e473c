#ifndef PLACEMENT_TESTS_SUPPORT_END_TO_END_TEST_H_
#define PLACEMENT_TESTS_SUPPORT_END_TO_END_TEST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "placement/v1/placement.pb.h"
#include "placement/v1/telemetry.pb.h"
#include "tests/support/api_client.h"
#include "tests/support/placementd_process.h"
#include "tests/support/test_database.h"

namespace placement::testing {

// Starts a placementd on `db` (already migrated) and waits until it is
// SERVING; a placementd that does not start or serve within `timeout` fails
// the test (call it under ASSERT_NO_FATAL_FAILURE).
void StartServingPlacementd(const TestDatabase& db,
                            std::unique_ptr<PlacementdProcess>* placementd,
                            absl::Duration timeout = absl::Seconds(10),
                            const std::vector<std::string>& extra_args = {});

// The set-up of the end-to-end suites that drive only the public API: a
// migrated test database, one placementd on it, serving, and a client of it.
// A suite that adds to the set-up calls
// ASSERT_NO_FATAL_FAILURE(EndToEndTest::SetUp()) first.
class EndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override;

  TestDatabase db_;
  std::unique_ptr<PlacementdProcess> placementd_;
  std::unique_ptr<ApiClient> client_;
};

// `recipe` on one GPU (no parallelism).
v1::Recipe OneGpu(v1::Recipe recipe);

// A run of `recipe` on `pool`/`sku` as an agent reports it: `startup_s` of
// start-up, then `steps` steps of `step_s`, all of them kept.
ApiClient::TimedRun MeasuredRun(const std::string& pool, const std::string& sku,
                                const v1::Recipe& recipe, int64_t steps,
                                double step_s, double startup_s);

// An eval of `metric` scoring `score`, served on `sku` in `precision`.
v1::EvalResult EvalOn(const std::string& sku, v1::Precision precision,
                      const std::string& metric, double score);

}  // namespace placement::testing

#endif  // PLACEMENT_TESTS_SUPPORT_END_TO_END_TEST_H_
