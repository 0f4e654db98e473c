#ifndef PLACEMENT_STORAGE_JSON_TEXT_H_
#define PLACEMENT_STORAGE_JSON_TEXT_H_

#include <map>
#include <string>

namespace placement::storage {

// A JSON object literal of string keys and values, for binding as a jsonb
// parameter ($n::jsonb). Every character that JSON requires is escaped.
std::string JsonObjectText(const std::map<std::string, std::string>& fields);

}  // namespace placement::storage

#endif  // PLACEMENT_STORAGE_JSON_TEXT_H_
