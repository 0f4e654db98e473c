#ifndef PLACEMENT_TESTS_SUPPORT_FIXTURES_H_
#define PLACEMENT_TESTS_SUPPORT_FIXTURES_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "placement/v1/catalog.pb.h"
#include "placement/v1/telemetry.pb.h"

namespace placement::testing {

// A client context with a deadline, as every call of ours carries.
std::unique_ptr<grpc::ClientContext> Deadline(int seconds = 10);

// The field paths named by a status's google.rpc.BadRequest.
std::vector<std::string> ViolatedFields(const grpc::Status& status);

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

}  // namespace placement::testing

#endif  // PLACEMENT_TESTS_SUPPORT_FIXTURES_H_
