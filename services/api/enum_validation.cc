#include "services/api/enum_validation.h"

#include "absl/strings/str_cat.h"
#include "services/api/field_walk.h"

namespace placement::services {
namespace {

class UndeclaredEnums : public FieldVisitor {
 public:
  explicit UndeclaredEnums(core::FieldViolations* out) : out_(out) {}

  void Enum(const google::protobuf::EnumDescriptor& type, int number,
            const std::string& path) override {
    if (type.FindValueByNumber(number) != nullptr) return;
    out_->push_back({path, absl::StrCat(number, " is not a declared value of ",
                                        type.full_name())});
  }
  void Text(const std::string&, const std::string&) override {}

 private:
  core::FieldViolations* out_;
};

}  // namespace

core::FieldViolations UndeclaredEnumValues(
    const google::protobuf::Message& message, const std::string& field_prefix) {
  core::FieldViolations violations;
  UndeclaredEnums visitor(&violations);
  WalkFields(message, field_prefix, visitor);
  return violations;
}

}  // namespace placement::services
