#ifndef PLACEMENT_TESTS_SUPPORT_FIXTURES_H_
#define PLACEMENT_TESTS_SUPPORT_FIXTURES_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "placement/v1/catalog.pb.h"
#include "placement/v1/placement.pb.h"
#include "placement/v1/telemetry.pb.h"

namespace placement::testing {

// A client context with a deadline, as every call of ours carries.
std::unique_ptr<grpc::ClientContext> Deadline(int seconds = 10);

// The field paths named by a status's google.rpc.BadRequest.
std::vector<std::string> ViolatedFields(const grpc::Status& status);

// The violation types named by a status's google.rpc.PreconditionFailure.
std::vector<std::string> PreconditionTypes(const grpc::Status& status);

// A random UUID (version 4 form).
std::string NewUuid();

// A valid training pool of `sku` ("L40S-PCIE-48GB" gets a PCIe fabric,
// everything else NVLink).
v1::Pool TrainingPool(const std::string& name, const std::string& sku,
                      int nodes = 2, int gpus_per_node = 8,
                      int64_t rate_micros = 2'000'000);

// A valid finished run: Llama-3.1-8B LoRA r16, seq 2048, on one GPU of
// `pool`/`sku`, 1000 of 1000 steps succeeded, ending one hour ago.
v1::BenchmarkRun SucceededRun(const std::string& pool, const std::string& sku);

// The guide's small LoRA: Llama-3.1-8B, rank 16 on all linear layers,
// sequences of 2048, micro-batch 2, checkpointing and flash attention.
v1::Recipe Lora8b();

// The guide's QLoRA of a 70B model: rank 16, double quantization, sequences
// of 1024, checkpointing and flash attention.
v1::Recipe Qlora70b();

// A plan of `recipe` for `total_steps`, asked by team "ml-platform".
v1::PlacePlanRequest PlanFor(const v1::Recipe& recipe,
                             int64_t total_steps = 10'000);

// The plan's candidate on, or rejection of, `pool`; null when there is none.
// The pointer is into `plan`, so a temporary plan is refused at compile time.
const v1::PlacementCandidate* Candidate(const v1::PlacePlanResponse& plan,
                                        const std::string& pool);
const v1::PlacementCandidate* Candidate(v1::PlacePlanResponse&& plan,
                                        const std::string& pool) = delete;
const v1::PoolRejection* Rejection(const v1::PlacePlanResponse& plan,
                                   const std::string& pool);
const v1::PoolRejection* Rejection(v1::PlacePlanResponse&& plan,
                                   const std::string& pool) = delete;

// Holds when `pool` is a candidate whose figures rest on exactly `runs`
// measured runs: the evidence has reached the plan.
std::function<bool(const v1::PlacePlanResponse&)> Measured(
    const std::string& pool, int runs);

}  // namespace placement::testing

#endif  // PLACEMENT_TESTS_SUPPORT_FIXTURES_H_
