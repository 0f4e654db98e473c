#ifndef PLACEMENT_STORAGE_DOUBLE_TEXT_H_
#define PLACEMENT_STORAGE_DOUBLE_TEXT_H_

#include <string>

namespace placement::storage {

// Appends the shortest text that PostgreSQL reads back as the same double
// (absl::StrCat keeps only six significant digits).
void AppendDouble(double value, std::string* out);

inline std::string DoubleText(double value) {
  std::string text;
  AppendDouble(value, &text);
  return text;
}

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_DOUBLE_TEXT_H_
