#include "services/console/render/proto_text.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "services/console/render/html.h"

namespace placement::services::console {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr int kMaxRepeatedShown = 64;
// Nesting the API's messages reach is shallow; the bound guards recursion.
constexpr int kMaxDepth = 8;

// "RUN_OUTCOME_" for RunOutcome.
std::string EnumPrefix(const google::protobuf::EnumDescriptor* type) {
  std::string prefix;
  const std::string& name = type->name();
  for (size_t i = 0; i < name.size(); ++i) {
    if (i > 0 && absl::ascii_isupper(name[i])) prefix.push_back('_');
    prefix.push_back(absl::ascii_toupper(name[i]));
  }
  return prefix + "_";
}

std::string RenderMessage(const Message& message, int depth);

// One value of `field` (the `index`th when repeated).
std::string ValueText(const Message& message, const FieldDescriptor* field,
                      int index, int depth) {
  const Reflection* r = message.GetReflection();
  const bool rep = field->is_repeated();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return Esc(absl::StrCat(rep ? r->GetRepeatedInt32(message, field, index)
                                  : r->GetInt32(message, field)));
    case FieldDescriptor::CPPTYPE_INT64:
      return Esc(absl::StrCat(rep ? r->GetRepeatedInt64(message, field, index)
                                  : r->GetInt64(message, field)));
    case FieldDescriptor::CPPTYPE_UINT32:
      return Esc(absl::StrCat(rep ? r->GetRepeatedUInt32(message, field, index)
                                  : r->GetUInt32(message, field)));
    case FieldDescriptor::CPPTYPE_UINT64:
      return Esc(absl::StrCat(rep ? r->GetRepeatedUInt64(message, field, index)
                                  : r->GetUInt64(message, field)));
    // Ten significant digits: a reader's precision, without the binary
    // tail of a computed double (0.013631488, not 0.013631488000000001).
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return absl::StrFormat("%.10g",
                             rep ? r->GetRepeatedDouble(message, field, index)
                                 : r->GetDouble(message, field));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return absl::StrFormat("%.7g",
                             rep ? r->GetRepeatedFloat(message, field, index)
                                 : r->GetFloat(message, field));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (rep ? r->GetRepeatedBool(message, field, index)
                  : r->GetBool(message, field))
                 ? "true"
                 : "false";
    case FieldDescriptor::CPPTYPE_ENUM:
      return Esc(EnumText(field->enum_type(),
                          rep ? r->GetRepeatedEnumValue(message, field, index)
                              : r->GetEnumValue(message, field)));
    case FieldDescriptor::CPPTYPE_STRING:
      if (field->type() == FieldDescriptor::TYPE_BYTES) {
        return absl::StrCat("(",
                            (rep ? r->GetRepeatedString(message, field, index)
                                 : r->GetString(message, field))
                                .size(),
                            " bytes)");
      }
      return Esc(rep ? r->GetRepeatedString(message, field, index)
                     : r->GetString(message, field));
    case FieldDescriptor::CPPTYPE_MESSAGE: {
      const Message& nested = rep ? r->GetRepeatedMessage(message, field, index)
                                  : r->GetMessage(message, field);
      const std::string& type = nested.GetDescriptor()->full_name();
      if (type == "google.protobuf.Timestamp") {
        const auto& t = static_cast<const google::protobuf::Timestamp&>(nested);
        return Esc(UtcTime(absl::FromUnixSeconds(t.seconds()) +
                           absl::Nanoseconds(t.nanos())));
      }
      if (type == "google.protobuf.Duration") {
        const auto& d = static_cast<const google::protobuf::Duration&>(nested);
        return absl::StrFormat(
            "%.10g s", static_cast<double>(d.seconds()) + d.nanos() / 1e9);
      }
      if (depth >= kMaxDepth) return "…";
      return RenderMessage(nested, depth + 1);
    }
  }
  return "";
}

std::string RenderMessage(const Message& message, int depth) {
  std::vector<const FieldDescriptor*> fields;
  message.GetReflection()->ListFields(message, &fields);
  std::string out = "<dl class=\"fields\">";
  for (const FieldDescriptor* field : fields) {
    if (field->options().deprecated()) continue;
    absl::StrAppend(&out, "<dt>", Esc(field->name()), "</dt><dd data-field=\"",
                    Esc(field->name()), "\">");
    if (field->is_map()) {
      // A map's entries are messages of (key, value).
      const int n = message.GetReflection()->FieldSize(message, field);
      for (int i = 0; i < n && i < kMaxRepeatedShown; ++i) {
        const Message& entry =
            message.GetReflection()->GetRepeatedMessage(message, field, i);
        const FieldDescriptor* key = entry.GetDescriptor()->map_key();
        const FieldDescriptor* value = entry.GetDescriptor()->map_value();
        absl::StrAppend(&out, i == 0 ? "" : ", ",
                        ValueText(entry, key, 0, depth), "=",
                        ValueText(entry, value, 0, depth));
      }
    } else if (field->is_repeated()) {
      const int n = message.GetReflection()->FieldSize(message, field);
      absl::StrAppend(&out, "<ol>");
      for (int i = 0; i < n && i < kMaxRepeatedShown; ++i) {
        absl::StrAppend(&out, "<li>", ValueText(message, field, i, depth),
                        "</li>");
      }
      absl::StrAppend(&out, "</ol>");
      if (n > kMaxRepeatedShown) {
        absl::StrAppend(&out, "(", n - kMaxRepeatedShown, " more)");
      }
    } else {
      absl::StrAppend(&out, ValueText(message, field, 0, depth));
    }
    absl::StrAppend(&out, "</dd>");
  }
  return out + "</dl>";
}

}  // namespace

std::string EnumText(const google::protobuf::EnumDescriptor* type, int value) {
  const google::protobuf::EnumValueDescriptor* v =
      type->FindValueByNumber(value);
  if (v == nullptr) return absl::StrCat(value);
  std::string name = v->name();
  const std::string prefix = EnumPrefix(type);
  if (absl::StartsWith(name, prefix)) name = name.substr(prefix.size());
  return name == "UNSPECIFIED" ? "" : name;
}

std::string RenderFields(const google::protobuf::Message& message) {
  return RenderMessage(message, 0);
}

}  // namespace placement::services::console
