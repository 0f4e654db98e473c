#include "storage/wire/double_text.h"

#include <charconv>

namespace placement::storage {

void AppendDouble(double value, std::string* out) {
  char buffer[32];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, error == std::errc() ? end : buffer);
}

}  // namespace placement::storage
