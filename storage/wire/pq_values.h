#ifndef PLACEMENT_STORAGE_PQ_VALUES_H_
#define PLACEMENT_STORAGE_PQ_VALUES_H_

#include <libpq-fe.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace placement::storage {

// Values in PostgreSQL's text format, for statements sent through raw libpq
// (PqConnection) where libpqxx's conversions are not at hand.

// A text[] literal: every element double-quoted, with '"' and '\' escaped,
// so that any text (commas, braces, quotes) stays one element.
//   TextArrayLiteral({"a", "b,c"}) == R"({"a","b,c"})"
std::string TextArrayLiteral(const std::vector<std::string>& items);

// Parses a text[] column's literal as PostgreSQL prints it (elements quoted
// only when they need to be).
std::vector<std::string> ParseTextArray(absl::string_view literal);

// The bigint at (`row`, `column`) of `result`; 0 when it is NULL.
int64_t Int64Field(const PGresult* result, int row, int column);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_PQ_VALUES_H_
