#ifndef PLACEMENT_SERVICES_PROTO_BYTES_H_
#define PLACEMENT_SERVICES_PROTO_BYTES_H_

#include <string>

#include <google/protobuf/message.h>

namespace placement::services {

// The deterministic serialization of `message`: equal messages give equal
// bytes, so stored bytes can be compared and fingerprinted.
std::string DeterministicBytes(const google::protobuf::Message& message);

}  // namespace placement::services

#endif  // PLACEMENT_SERVICES_PROTO_BYTES_H_
