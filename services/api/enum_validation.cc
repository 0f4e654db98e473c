#include "services/api/enum_validation.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"

namespace placement::services {
namespace {

using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

void CheckNumber(const EnumDescriptor& type, int number,
                 const std::string& path, core::FieldViolations* out) {
  if (type.FindValueByNumber(number) != nullptr) return;
  out->push_back({path, absl::StrCat(number, " is not a declared value of ",
                                     type.full_name())});
}

// The text a map entry's key takes in a path: quoted strings, bare numbers.
std::string MapKeyText(const Message& entry) {
  const FieldDescriptor* key = entry.GetDescriptor()->map_key();
  const Reflection& r = *entry.GetReflection();
  switch (key->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      return absl::StrCat("\"", r.GetString(entry, key), "\"");
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(r.GetInt32(entry, key));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(r.GetInt64(entry, key));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(r.GetUInt32(entry, key));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(r.GetUInt64(entry, key));
    case FieldDescriptor::CPPTYPE_BOOL:
      return r.GetBool(entry, key) ? "true" : "false";
    default:
      return "?";
  }
}

void Walk(const Message& message, const std::string& prefix,
          core::FieldViolations* out) {
  const Reflection& r = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r.ListFields(message, &fields);  // set fields only, in number order
  for (const FieldDescriptor* field : fields) {
    const std::string path = absl::StrCat(prefix, field->name());
    if (field->is_map()) {
      const FieldDescriptor* value = field->message_type()->map_value();
      if (value->cpp_type() != FieldDescriptor::CPPTYPE_ENUM &&
          value->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
        continue;
      }
      for (int i = 0; i < r.FieldSize(message, field); ++i) {
        const Message& entry = r.GetRepeatedMessage(message, field, i);
        const std::string entry_path =
            absl::StrCat(path, "[", MapKeyText(entry), "]");
        const Reflection& er = *entry.GetReflection();
        if (value->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
          CheckNumber(*value->enum_type(), er.GetEnumValue(entry, value),
                      entry_path, out);
        } else if (er.HasField(entry, value)) {
          Walk(er.GetMessage(entry, value), entry_path + ".", out);
        }
      }
      continue;
    }
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
      if (field->is_repeated()) {
        for (int i = 0; i < r.FieldSize(message, field); ++i) {
          CheckNumber(*field->enum_type(),
                      r.GetRepeatedEnumValue(message, field, i),
                      absl::StrCat(path, "[", i, "]"), out);
        }
      } else {
        CheckNumber(*field->enum_type(), r.GetEnumValue(message, field), path,
                    out);
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int i = 0; i < r.FieldSize(message, field); ++i) {
          Walk(r.GetRepeatedMessage(message, field, i),
               absl::StrCat(path, "[", i, "]."), out);
        }
      } else {
        Walk(r.GetMessage(message, field), path + ".", out);
      }
    }
  }
}

}  // namespace

core::FieldViolations UndeclaredEnumValues(const Message& message,
                                           const std::string& field_prefix) {
  core::FieldViolations violations;
  Walk(message, field_prefix, &violations);
  return violations;
}

}  // namespace placement::services
