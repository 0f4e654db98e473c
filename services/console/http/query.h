#ifndef PLACEMENT_SERVICES_CONSOLE_HTTP_QUERY_H_
#define PLACEMENT_SERVICES_CONSOLE_HTTP_QUERY_H_

// A request target split into its path and its query parameters, checked
// strictly: every refusal is INVALID_ARGUMENT with a core::FieldViolation
// naming the parameter (or "query" when no name can be trusted), and no
// message repeats a value a caller sent (a value may be a token pasted in
// the wrong place; names are checked to be short identifiers before they
// are ever repeated).

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "core/field_violation.h"

namespace placement::services::console {

// Bounds: a parameter's decoded value, and how many a query may hold.
inline constexpr size_t kMaxQueryValueLength = 256;
inline constexpr size_t kMaxQueryParams = 16;

struct QueryParam {
  std::string name;
  std::string value;
};

struct RequestTarget {
  std::string path;  // as sent, not decoded: routes match it exactly
  std::vector<QueryParam> params;
};

// Splits `target` ("/pool?name=a100") into its path and decoded parameters
// (percent-escapes and '+'). Refused: a target that is not a path; a
// parameter name that is not 1-32 of a-z, 0-9 and '_'; a name given twice;
// a value that does not decode, holds a control character or is longer
// than kMaxQueryValueLength; more than kMaxQueryParams parameters; and any
// parameter that carries a token (named like one, or a value holding
// "plc_"): tokens are never accepted in a URL, where logs and browser
// history keep them.
absl::StatusOr<RequestTarget> ParseTarget(absl::string_view target);

// The value of field `name` of an application/x-www-form-urlencoded body
// (the sign-in form's token); "" when absent. INVALID_ARGUMENT naming the
// field when it does not decode or is longer than `max_length`.
absl::StatusOr<std::string> FormValue(absl::string_view body,
                                      absl::string_view name,
                                      size_t max_length);

// The parameters one page takes, read with their checks. Each reader
// records a violation for a bad value and returns the default; Finish()
// then refuses the request with every violation at once.
class PageQuery {
 public:
  // Any parameter outside `allowed` is a violation naming it.
  PageQuery(const std::vector<QueryParam>& params,
            std::initializer_list<absl::string_view> allowed);

  bool Has(absl::string_view name) const;
  // The value, or `fallback` when the parameter is absent.
  std::string Text(absl::string_view name, absl::string_view fallback) const;
  // An integer in [low, high].
  int Int(absl::string_view name, int low, int high, int fallback);
  // A UTC day, YYYY-MM-DD.
  std::optional<absl::CivilDay> Day(absl::string_view name);
  // One of `choices`.
  std::string Choice(absl::string_view name,
                     std::initializer_list<absl::string_view> choices,
                     absl::string_view fallback);
  // A UUID (returned in lower case); `required`: a violation when absent.
  std::string Uuid(absl::string_view name, bool required);
  // A pool's name as pools are named (1-63 of a-z, 0-9 and '-', from a
  // letter).
  std::string PoolName(absl::string_view name, bool required);
  // "1" or "0".
  bool Flag(absl::string_view name, bool fallback);
  // An opaque page token of the API's (web-safe base64, as sent).
  std::string PageToken(absl::string_view name);

  // Adds a violation found by the caller (e.g. two days out of order).
  void Refuse(absl::string_view name, absl::string_view description);
  // OK, or INVALID_ARGUMENT with every violation recorded.
  absl::Status Finish() const;

 private:
  const std::string* Find(absl::string_view name) const;
  std::vector<QueryParam> params_;
  core::FieldViolations violations_;
};

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_HTTP_QUERY_H_
