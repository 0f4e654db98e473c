#ifndef PLACEMENT_SERVICES_CONSOLE_RENDER_HTML_H_
#define PLACEMENT_SERVICES_CONSOLE_RENDER_HTML_H_

// Small helpers for writing HTML by hand: every text that did not come
// from this file is escaped, every URL is built from a fixed path and
// percent-encoded parameters, and figures are written twice where a test
// or a script reads them back: shown rounded, and exact in a data-v
// attribute.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace placement::services::console {

// Escapes & < > " ' for text and attribute values.
std::string Esc(absl::string_view text);

// Percent-encodes everything but unreserved characters (RFC 3986).
std::string UrlEncode(absl::string_view text);

// `path` with its parameters: Href("/pool", {{"name", "a100"}}). Parameters
// with an empty value are left out.
std::string Href(
    absl::string_view path,
    std::initializer_list<std::pair<absl::string_view, absl::string_view>>
        params = {});

// <a href="...">text</a>, both escaped.
std::string Link(absl::string_view href, absl::string_view text);

// A double in full (round-trips: "%.17g"), for data-v attributes.
std::string Exact(double value);
// A double rounded to `digits` decimals.
std::string Fixed(double value, int digits);
// A fraction as a percentage with one decimal ("12.5%").
std::string Percent(double fraction);
// A UTC time as "2026-01-31 12:00:05 UTC"; "-" for an infinite one.
std::string UtcTime(absl::Time time);

// A table cell of figure `field` showing `shown` whose exact value is
// `exact` (<td class="num" data-field="field" data-v="exact">shown</td>).
std::string NumCell(absl::string_view field, absl::string_view shown,
                    absl::string_view exact);
// A text cell of `field` (its text is its exact value).
std::string TextCell(absl::string_view field, absl::string_view text);
// <th>...</th> for each heading.
std::string HeadRow(std::initializer_list<absl::string_view> headings);

}  // namespace placement::services::console

#endif  // PLACEMENT_SERVICES_CONSOLE_RENDER_HTML_H_
