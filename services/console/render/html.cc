#include "services/console/render/html.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace placement::services::console {

std::string Esc(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string UrlEncode(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      out.push_back(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", static_cast<unsigned char>(c));
    }
  }
  return out;
}

std::string Href(
    absl::string_view path,
    std::initializer_list<std::pair<absl::string_view, absl::string_view>>
        params) {
  std::string out(path);
  char separator = '?';
  for (const auto& [name, value] : params) {
    if (value.empty()) continue;
    absl::StrAppend(&out, std::string(1, separator), UrlEncode(name), "=",
                    UrlEncode(value));
    separator = '&';
  }
  return out;
}

std::string Link(absl::string_view href, absl::string_view text) {
  return absl::StrCat("<a href=\"", Esc(href), "\">", Esc(text), "</a>");
}

std::string Exact(double value) {
  if (!std::isfinite(value)) return "";
  return absl::StrFormat("%.17g", value);
}

std::string Fixed(double value, int digits) {
  return absl::StrFormat("%.*f", digits, value);
}

std::string Percent(double fraction) {
  return absl::StrFormat("%.1f%%", 100 * fraction);
}

std::string UtcTime(absl::Time time) {
  if (time == absl::InfinitePast() || time == absl::InfiniteFuture()) {
    return "-";
  }
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", time, absl::UTCTimeZone());
}

std::string NumCell(absl::string_view field, absl::string_view shown,
                    absl::string_view exact) {
  return absl::StrCat("<td class=\"num\" data-field=\"", Esc(field),
                      "\" data-v=\"", Esc(exact), "\">", Esc(shown), "</td>");
}

std::string TextCell(absl::string_view field, absl::string_view text) {
  return absl::StrCat("<td data-field=\"", Esc(field), "\" data-v=\"",
                      Esc(text), "\">", Esc(text), "</td>");
}

std::string HeadRow(std::initializer_list<absl::string_view> headings) {
  std::string out = "<tr>";
  for (absl::string_view h : headings)
    absl::StrAppend(&out, "<th>", Esc(h), "</th>");
  return out + "</tr>";
}

}  // namespace placement::services::console
