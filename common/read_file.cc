#include "common/read_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace placement::common {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace placement::common
