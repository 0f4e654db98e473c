#ifndef PLACEMENT_CLIENTS_PLACECTL_JSON_H_
#define PLACEMENT_CLIENTS_PLACECTL_JSON_H_

#include <google/protobuf/message.h>

#include <string>

namespace placement::placectl {

// Pretty JSON with the proto field names, every field printed, ending in a
// newline.
std::string ToJson(const google::protobuf::Message& message);

}  // namespace placement::placectl

#endif  // PLACEMENT_CLIENTS_PLACECTL_JSON_H_
