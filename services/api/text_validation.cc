#include "services/api/text_validation.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "services/api/field_walk.h"

namespace placement::services {
namespace {

// The fields whose text is one line: compared as keys, shown one a line.
bool IsOneLineField(absl::string_view path) {
  if (const size_t bracket = path.rfind('[');
      bracket != absl::string_view::npos && absl::EndsWith(path, "]")) {
    path = path.substr(0, bracket);  // an element of a repeated field
  }
  if (const size_t dot = path.rfind('.'); dot != absl::string_view::npos) {
    path = path.substr(dot + 1);
  }
  return path == "team" || path == "teams" || path == "request_id";
}

// What kind of refused character `code_point` is; nullptr for one allowed.
const char* RefusedKind(uint32_t code_point, bool one_line) {
  if (code_point == '\n' || code_point == '\r') {
    return one_line ? "a line break (this field takes one line)" : nullptr;
  }
  if (code_point == '\t') return nullptr;
  if (code_point < 0x20 || code_point == 0x7f) return "a control character";
  if (code_point >= 0x80 && code_point <= 0x9f) return "a C1 control";
  if ((code_point >= 0x202a && code_point <= 0x202e) ||
      (code_point >= 0x2066 && code_point <= 0x2069)) {
    return "a bidirectional override or isolate";
  }
  if (code_point == 0x2028 || code_point == 0x2029) {
    return "a line or paragraph separator";
  }
  return nullptr;
}

// Decodes the UTF-8 sequence at `value[i]` (proto3 strings arrive as valid
// UTF-8; a stray byte reads as itself) and sets `*length`.
uint32_t CodePointAt(const std::string& value, size_t i, size_t* length) {
  const auto byte = [&](size_t k) {
    return static_cast<unsigned char>(value[k]);
  };
  const unsigned char lead = byte(i);
  int extra = 0;
  uint32_t code_point = lead;
  if (lead >= 0xf0) {
    extra = 3;
    code_point = lead & 0x07;
  } else if (lead >= 0xe0) {
    extra = 2;
    code_point = lead & 0x0f;
  } else if (lead >= 0xc0) {
    extra = 1;
    code_point = lead & 0x1f;
  }
  if (extra > 0 && i + extra >= value.size()) {  // cut short
    *length = 1;
    return lead;
  }
  for (int k = 1; k <= extra; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) {
      *length = 1;
      return lead;
    }
    code_point = (code_point << 6) | (byte(i + k) & 0x3f);
  }
  *length = 1 + extra;
  return code_point;
}

class RefusedCharacters : public FieldVisitor {
 public:
  explicit RefusedCharacters(core::FieldViolations* out) : out_(out) {}

  void Enum(const google::protobuf::EnumDescriptor&, int,
            const std::string&) override {}
  void Text(const std::string& value, const std::string& path) override {
    std::string why = RefusedCharacter(value, IsOneLineField(path));
    if (!why.empty()) out_->push_back({path, std::move(why)});
  }

 private:
  core::FieldViolations* out_;
};

}  // namespace

std::string RefusedCharacter(const std::string& value, bool one_line) {
  for (size_t i = 0; i < value.size();) {
    size_t length = 1;
    const uint32_t code_point = CodePointAt(value, i, &length);
    if (const char* kind = RefusedKind(code_point, one_line)) {
      return absl::StrFormat(
          "holds %s, U+%04X at byte %d; text fields take printable "
          "characters, tab and newline only (no C0 or C1 controls, "
          "bidirectional overrides or isolates, or line separators)",
          kind, code_point, i);
    }
    i += length;
  }
  return "";
}

core::FieldViolations RefusedCharacterFields(
    const google::protobuf::Message& message, const std::string& field_prefix) {
  core::FieldViolations violations;
  RefusedCharacters visitor(&violations);
  WalkFields(message, field_prefix, visitor);
  return violations;
}

}  // namespace placement::services
