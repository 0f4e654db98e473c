#include "services/console/http/query.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace placement::services::console {
namespace {

constexpr char kNoTokenInUrl[] =
    "carries a token: tokens are never accepted in a URL (logs and browser "
    "history keep URLs); send 'Authorization: Bearer <token>' or sign in at "
    "/login";

// Names a token travels under elsewhere; refused outright, whatever their
// value.
bool NamesAToken(absl::string_view name) {
  for (absl::string_view token_name :
       {"token", "access_token", "bearer", "authorization", "auth", "api_key",
        "apikey", "key", "secret", "password"}) {
    if (name == token_name) return true;
  }
  return false;
}

bool IsParamName(absl::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_';
  });
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `in` ('+' is a space); false on a broken escape.
bool Decode(absl::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '+') {
      out->push_back(' ');
    } else if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int high = HexValue(in[i + 1]);
      const int low = HexValue(in[i + 2]);
      if (high < 0 || low < 0) return false;
      out->push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool HasControlCharacter(absl::string_view value) {
  return std::any_of(value.begin(), value.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

// Checks one "name=value" piece; appends the parameter or a violation.
void AddParam(absl::string_view piece, RequestTarget* target,
              core::FieldViolations* violations) {
  std::pair<absl::string_view, absl::string_view> raw =
      absl::StrSplit(piece, absl::MaxSplits('=', 1));
  std::string name;
  if (!Decode(raw.first, &name) || !IsParamName(name)) {
    violations->push_back(
        {"query",
         "a parameter name must be 1-32 characters of a-z, 0-9 and '_'"});
    return;
  }
  if (NamesAToken(name)) {
    violations->push_back({name, kNoTokenInUrl});
    return;
  }
  // Decoding never lengthens a value: a raw value three times the bound
  // cannot fit, and is not decoded at all.
  if (raw.second.size() > 3 * kMaxQueryValueLength) {
    violations->push_back(
        {name,
         absl::StrCat("is longer than ", kMaxQueryValueLength, " characters")});
    return;
  }
  std::string value;
  if (!Decode(raw.second, &value)) {
    violations->push_back({name, "is not percent-encoded correctly"});
    return;
  }
  if (absl::StrContains(value, "plc_")) {
    violations->push_back({name, kNoTokenInUrl});
    return;
  }
  if (value.size() > kMaxQueryValueLength) {
    violations->push_back(
        {name,
         absl::StrCat("is longer than ", kMaxQueryValueLength, " characters")});
    return;
  }
  if (HasControlCharacter(value)) {
    violations->push_back({name, "holds a control character"});
    return;
  }
  for (const QueryParam& seen : target->params) {
    if (seen.name == name) {
      violations->push_back({name, "is given more than once"});
      return;
    }
  }
  target->params.push_back({std::move(name), std::move(value)});
}

bool IsLowerHex(char c) {
  return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
}

}  // namespace

absl::StatusOr<RequestTarget> ParseTarget(absl::string_view target) {
  if (target.empty() || target.front() != '/') {
    return core::InvalidArgumentWithViolations(
        {{"target", "must be a path starting with '/'"}});
  }
  RequestTarget parsed;
  const size_t question = target.find('?');
  parsed.path = std::string(target.substr(0, question));
  if (question == absl::string_view::npos) return parsed;
  core::FieldViolations violations;
  size_t pieces = 0;
  for (absl::string_view piece :
       absl::StrSplit(target.substr(question + 1), '&', absl::SkipEmpty())) {
    if (++pieces > kMaxQueryParams) {
      violations.push_back(
          {"query", absl::StrCat("at most ", kMaxQueryParams, " parameters")});
      break;
    }
    AddParam(piece, &parsed, &violations);
  }
  if (!violations.empty()) {
    return core::InvalidArgumentWithViolations(violations);
  }
  return parsed;
}

absl::StatusOr<std::string> FormValue(absl::string_view body,
                                      absl::string_view name,
                                      size_t max_length) {
  for (absl::string_view piece : absl::StrSplit(body, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> raw =
        absl::StrSplit(piece, absl::MaxSplits('=', 1));
    if (raw.first != name) continue;
    std::string value;
    if (raw.second.size() > 3 * max_length || !Decode(raw.second, &value) ||
        value.size() > max_length || HasControlCharacter(value)) {
      return core::InvalidArgumentWithViolations(
          {{std::string(name), absl::StrCat("must be at most ", max_length,
                                            " characters, percent-encoded")}});
    }
    return value;
  }
  return std::string();
}

PageQuery::PageQuery(const std::vector<QueryParam>& params,
                     std::initializer_list<absl::string_view> allowed)
    : params_(params) {
  for (const QueryParam& param : params_) {
    if (std::find(allowed.begin(), allowed.end(), param.name) ==
        allowed.end()) {
      violations_.push_back(
          {param.name,
           allowed.size() == 0
               ? std::string("is not a parameter of this page (it takes none)")
               : absl::StrCat("is not a parameter of this page (it takes ",
                              absl::StrJoin(allowed, ", "), ")")});
    }
  }
}

const std::string* PageQuery::Find(absl::string_view name) const {
  for (const QueryParam& param : params_) {
    if (param.name == name) return &param.value;
  }
  return nullptr;
}

bool PageQuery::Has(absl::string_view name) const {
  return Find(name) != nullptr;
}

std::string PageQuery::Text(absl::string_view name,
                            absl::string_view fallback) const {
  const std::string* value = Find(name);
  return value == nullptr ? std::string(fallback) : *value;
}

int PageQuery::Int(absl::string_view name, int low, int high, int fallback) {
  const std::string* value = Find(name);
  if (value == nullptr) return fallback;
  int parsed = 0;
  if (!absl::SimpleAtoi(*value, &parsed) || parsed < low || parsed > high) {
    Refuse(name,
           absl::StrCat("must be a whole number from ", low, " to ", high));
    return fallback;
  }
  return parsed;
}

std::optional<absl::CivilDay> PageQuery::Day(absl::string_view name) {
  const std::string* value = Find(name);
  if (value == nullptr) return std::nullopt;
  absl::CivilDay day;
  // ParseCivilTime accepts exactly YYYY-MM-DD; the year is bounded so that
  // a day converts to a timestamp the API accepts.
  if (value->size() != 10 || !absl::ParseCivilTime(*value, &day) ||
      day.year() < 1970 || day.year() > 2999) {
    Refuse(name, "must be a day, YYYY-MM-DD (UTC), from 1970 to 2999");
    return std::nullopt;
  }
  return day;
}

std::string PageQuery::Choice(absl::string_view name,
                              std::initializer_list<absl::string_view> choices,
                              absl::string_view fallback) {
  const std::string* value = Find(name);
  if (value == nullptr) return std::string(fallback);
  if (std::find(choices.begin(), choices.end(), *value) == choices.end()) {
    Refuse(name, absl::StrCat("must be one of ", absl::StrJoin(choices, ", ")));
    return std::string(fallback);
  }
  return *value;
}

std::string PageQuery::Uuid(absl::string_view name, bool required) {
  const std::string* value = Find(name);
  if (value == nullptr) {
    if (required) Refuse(name, "is required");
    return "";
  }
  std::string lower = absl::AsciiStrToLower(*value);
  bool ok = lower.size() == 36;
  for (size_t i = 0; ok && i < lower.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    ok = dash ? lower[i] == '-' : IsLowerHex(lower[i]);
  }
  if (!ok) {
    Refuse(name, "must be a UUID");
    return "";
  }
  return lower;
}

std::string PageQuery::PoolName(absl::string_view name, bool required) {
  const std::string* value = Find(name);
  if (value == nullptr) {
    if (required) Refuse(name, "is required");
    return "";
  }
  bool ok = !value->empty() && value->size() <= 63 &&
            absl::ascii_islower(value->front());
  for (char c : *value) {
    ok = ok && (absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-');
  }
  if (!ok) {
    Refuse(name,
           "must be a pool name: 1-63 characters of a-z, 0-9 and '-', "
           "starting with a letter");
    return "";
  }
  return *value;
}

bool PageQuery::Flag(absl::string_view name, bool fallback) {
  const std::string* value = Find(name);
  if (value == nullptr) return fallback;
  if (*value != "0" && *value != "1") {
    Refuse(name, "must be 1 or 0");
    return fallback;
  }
  return *value == "1";
}

std::string PageQuery::PageToken(absl::string_view name) {
  const std::string* value = Find(name);
  if (value == nullptr) return "";
  const bool ok = std::all_of(value->begin(), value->end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '=';
  });
  if (!ok) {
    Refuse(name, "is not a page token of this page");
    return "";
  }
  return *value;
}

void PageQuery::Refuse(absl::string_view name, absl::string_view description) {
  violations_.push_back({std::string(name), std::string(description)});
}

absl::Status PageQuery::Finish() const {
  if (violations_.empty()) return absl::OkStatus();
  return core::InvalidArgumentWithViolations(violations_);
}

}  // namespace placement::services::console
