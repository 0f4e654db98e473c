#include "services/api/text_validation.h"

#include "absl/strings/str_format.h"
#include "services/api/field_walk.h"

namespace placement::services {
namespace {

bool IsRefusedControl(unsigned char c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return c < 0x20 || c == 0x7f;
}

class ControlCharacters : public FieldVisitor {
 public:
  explicit ControlCharacters(core::FieldViolations* out) : out_(out) {}

  void Enum(const google::protobuf::EnumDescriptor&, int,
            const std::string&) override {}
  void Text(const std::string& value, const std::string& path) override {
    for (size_t i = 0; i < value.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(value[i]);
      if (!IsRefusedControl(c)) continue;
      out_->push_back(
          {path, absl::StrFormat("holds the control character U+%04X at byte "
                                 "%d; text fields take printable characters, "
                                 "tab and newline only",
                                 c, i)});
      return;  // one violation per field
    }
  }

 private:
  core::FieldViolations* out_;
};

}  // namespace

core::FieldViolations ControlCharacterFields(
    const google::protobuf::Message& message, const std::string& field_prefix) {
  core::FieldViolations violations;
  ControlCharacters visitor(&violations);
  WalkFields(message, field_prefix, visitor);
  return violations;
}

}  // namespace placement::services
