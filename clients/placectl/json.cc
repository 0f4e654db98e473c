#include "clients/placectl/json.h"

#include <google/protobuf/util/json_util.h>

namespace placement::placectl {

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json + "\n";
}

}  // namespace placement::placectl
