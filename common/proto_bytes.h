#ifndef PLACEMENT_COMMON_PROTO_BYTES_H_
#define PLACEMENT_COMMON_PROTO_BYTES_H_

#include <google/protobuf/message.h>

#include <string>

namespace placement::common {

// The deterministic serialization of `message`: equal messages give equal
// bytes, so stored bytes can be compared and fingerprinted.
std::string DeterministicBytes(const google::protobuf::Message& message);

}  // namespace placement::common

#endif  // PLACEMENT_COMMON_PROTO_BYTES_H_
