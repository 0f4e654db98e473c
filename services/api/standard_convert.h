#ifndef PLACEMENT_SERVICES_API_STANDARD_CONVERT_H_
#define PLACEMENT_SERVICES_API_STANDARD_CONVERT_H_

#include <string>

#include "core/field_violation.h"
#include "placement/v1/placement.pb.h"
#include "storage/records/standard_records.h"

namespace placement::services {

// A stored standard as the API's (its recipe class parsed; DATA_LOSS-free:
// a class that does not parse is left unset).
void StandardToProto(const storage::StandardRecord& record, v1::Standard* out);

// The checks of a WriteStandardRequest on its own (field paths as the API's).
core::FieldViolations ValidateWriteStandard(
    const v1::WriteStandardRequest& request);

// The checks of a RetireStandardRequest on its own.
core::FieldViolations ValidateRetireStandard(
    const v1::RetireStandardRequest& request);

// What makes two writes the same: the request without its request_id,
// hashed (SHA-256, lower-case hex).
std::string WriteStandardFingerprint(const v1::WriteStandardRequest& request);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_API_STANDARD_CONVERT_H_
