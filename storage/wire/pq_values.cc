#include "storage/wire/pq_values.h"

#include "absl/strings/numbers.h"
#include "core/check.h"

namespace placement::storage {

std::string TextArrayLiteral(const std::vector<std::string>& items) {
  std::string literal = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) literal.push_back(',');
    literal.push_back('"');
    for (char c : items[i]) {
      if (c == '"' || c == '\\') literal.push_back('\\');
      literal.push_back(c);
    }
    literal.push_back('"');
  }
  literal.push_back('}');
  return literal;
}

std::vector<std::string> ParseTextArray(absl::string_view literal) {
  std::vector<std::string> items;
  if (literal.size() < 2) return items;
  literal = literal.substr(1, literal.size() - 2);
  std::string current;
  bool quoted = false, escaped = false, any = false;
  for (char c : literal) {
    if (escaped) {
      current.push_back(c);
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ',' && !quoted) {
      items.push_back(std::move(current));
      current.clear();
      any = false;
    } else {
      current.push_back(c);
      any = true;
    }
  }
  if (any || !current.empty()) items.push_back(std::move(current));
  return items;
}

int64_t Int64Field(const PGresult* result, int row, int column) {
  int64_t value = 0;
  // PostgreSQL prints a bigint column as an integer, and NULL as "".
  const bool parsed = absl::SimpleAtoi(PQgetvalue(result, row, column), &value);
  PLACEMENT_DCHECK(parsed || PQgetisnull(result, row, column),
                   "a bigint column holds an integer");
  return value;
}

}  // namespace placement::storage
