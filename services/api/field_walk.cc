#include "services/api/field_walk.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace placement::services {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// The text a map entry's key takes in a path: quoted (and escaped) strings,
// bare numbers.
std::string MapKeyText(const Message& entry) {
  const FieldDescriptor* key = entry.GetDescriptor()->map_key();
  const Reflection& r = *entry.GetReflection();
  switch (key->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      return absl::StrCat("\"", absl::CEscape(r.GetString(entry, key)), "\"");
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

// One value of `field` in `message`: element `index` of a repeated field, or
// the singular value when `index` < 0.
void VisitValue(const Message& message, const FieldDescriptor& field, int index,
                const std::string& path, FieldVisitor& visitor) {
  const Reflection& r = *message.GetReflection();
  const bool repeated = index >= 0;
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_ENUM:
      visitor.Enum(*field.enum_type(),
                   repeated ? r.GetRepeatedEnumValue(message, &field, index)
                            : r.GetEnumValue(message, &field),
                   path);
      break;
    case FieldDescriptor::CPPTYPE_STRING:
      if (field.type() != FieldDescriptor::TYPE_STRING) break;  // bytes
      visitor.Text(repeated ? r.GetRepeatedString(message, &field, index)
                            : r.GetString(message, &field),
                   path);
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      WalkFields(repeated ? r.GetRepeatedMessage(message, &field, index)
                          : r.GetMessage(message, &field),
                 path + ".", visitor);
      break;
    default:
      break;
  }
}

void VisitMap(const Message& message, const FieldDescriptor& field,
              const std::string& path, FieldVisitor& visitor) {
  const Reflection& r = *message.GetReflection();
  const FieldDescriptor* key = field.message_type()->map_key();
  const FieldDescriptor* value = field.message_type()->map_value();
  for (int i = 0; i < r.FieldSize(message, &field); ++i) {
    const Message& entry = r.GetRepeatedMessage(message, &field, i);
    if (key->type() == FieldDescriptor::TYPE_STRING) {
      visitor.Text(entry.GetReflection()->GetString(entry, key), path);
    }
    if (value->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
        !entry.GetReflection()->HasField(entry, value)) {
      continue;
    }
    VisitValue(entry, *value, -1,
               absl::StrCat(path, "[", MapKeyText(entry), "]"), visitor);
  }
}

}  // namespace

void WalkFields(const Message& message, const std::string& prefix,
                FieldVisitor& visitor) {
  const Reflection& r = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r.ListFields(message, &fields);  // set fields only, in number order
  for (const FieldDescriptor* field : fields) {
    const std::string path = absl::StrCat(prefix, field->name());
    if (field->is_map()) {
      VisitMap(message, *field, path, visitor);
    } else if (field->is_repeated()) {
      for (int i = 0; i < r.FieldSize(message, field); ++i) {
        VisitValue(message, *field, i, absl::StrCat(path, "[", i, "]"),
                   visitor);
      }
    } else {
      VisitValue(message, *field, -1, path, visitor);
    }
  }
}

}  // namespace placement::services
